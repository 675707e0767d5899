# `cmake --install`: libraries, headers, pkg-config file, CMake package.
include(CMakePackageConfigHelpers)

set(HWPMC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hwpmc)

install(TARGETS hwpmc hwpmc_static hwpmc_uapi
    EXPORT hwpmcTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${HWPMC_UAPI_DIR}/linux/hwpmc.h ${HWPMC_UAPI_DIR}/linux/pctr.h
    ${HWPMC_UAPI_DIR}/linux/perfmon.h
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/linux)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libhwpmc/include/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
# FreeBSD programs: -I<includedir>/hwpmc/compat gives them FreeBSD's <pmc.h>
# and <sys/pmc.h> (libhwpmc/compat/include/sys/pmc.h says what differs).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/libhwpmc/compat/include/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/hwpmc/compat
    FILES_MATCHING PATTERN "*.h")

install(EXPORT hwpmcTargets NAMESPACE hwpmc:: DESTINATION ${HWPMC_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/hwpmcConfig.cmake.in
    ${PROJECT_BINARY_DIR}/hwpmcConfig.cmake
    INSTALL_DESTINATION ${HWPMC_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hwpmcConfigVersion.cmake
    COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hwpmcConfig.cmake
    ${PROJECT_BINARY_DIR}/hwpmcConfigVersion.cmake
    DESTINATION ${HWPMC_CMAKE_DIR})

# Relocatable: the prefix is found from the .pc file's own directory, so
# `cmake --install --prefix DIR` yields a working file.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(HWPMC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
    file(RELATIVE_PATH HWPMC_PC_UP "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
    string(REGEX REPLACE "/$" "" HWPMC_PC_UP "${HWPMC_PC_UP}")
    set(HWPMC_PC_PREFIX "\${pcfiledir}/${HWPMC_PC_UP}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
    set(HWPMC_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
    set(HWPMC_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(HWPMC_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
    set(HWPMC_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/hwpmc.pc.in ${PROJECT_BINARY_DIR}/hwpmc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hwpmc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
