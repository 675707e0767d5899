# ctest: install the build tree into a scratch prefix, then build against it
# with find_package(hwpmc) and with pkg-config.
#   cmake -DBUILD=<build dir> -DSRC=<this dir> -DWORK=<scratch> -P run.cmake
function(run)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGV}\n${out}")
    endif()
endfunction()

file(REMOVE_RECURSE ${WORK})
set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${prefix})
foreach(f include/pmc.h include/hwpmc/pmc.h include/pmclog.h include/hwpmc/pmclog.h
          include/hwpmc/hwpmc.hpp include/linux/hwpmc.h
          lib/libhwpmc.a lib/pkgconfig/hwpmc.pc lib/cmake/hwpmc/hwpmcConfig.cmake)
    if(NOT EXISTS ${prefix}/${f})
        message(FATAL_ERROR "not installed: ${f}")
    endif()
endforeach()

run(${CMAKE_COMMAND} -S ${SRC} -B ${WORK}/consumer -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK}/consumer)
run(${WORK}/consumer/consumer_shared)
run(${WORK}/consumer/consumer_static)

# pkg-config, and FreeBSD pmc(3) and pmclog(3) code built unchanged with it.
find_program(PKG_CONFIG pkg-config)
find_program(CC NAMES cc gcc clang)
if(PKG_CONFIG AND CC)
    set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
    execute_process(COMMAND ${PKG_CONFIG} --cflags --libs hwpmc
        OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "pkg-config hwpmc failed")
    endif()
    separate_arguments(flags UNIX_COMMAND "${flags}")
    foreach(example pmc_self_count pmclog_print)
        run(${CC} -std=c11 -Wall -Wextra -Werror ${SRC}/../../examples/${example}.c ${flags}
            -o ${WORK}/${example})
    endforeach()
endif()
message(STATUS "installed package OK")
