# The libFuzzer targets need clang.  When clang++ with libFuzzer is found,
# libhwpmc/fuzz is built as an external project with it; the ctests
# `libhwpmc_fuzz_spec` and `libhwpmc_fuzz_pmclog` run the fuzzers for
# HWPMC_FUZZ_SECONDS each.  Without clang the tests are still registered and
# report themselves skipped.
include(ExternalProject)

set(HWPMC_FUZZ_SECONDS 20 CACHE STRING "Bounded run time of each fuzzer in ctest")
find_program(HWPMC_CLANGXX NAMES clang++ clang++-14 clang++-15 clang++-16 clang++-13)

set(HWPMC_FUZZ_OK FALSE)
if(HWPMC_CLANGXX)
    set(probe_dir ${CMAKE_BINARY_DIR}/fuzz-probe)
    file(WRITE ${probe_dir}/probe.cpp
        "#include <cstdint>\n#include <cstddef>\n"
        "extern \"C\" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) { return 0; }\n")
    execute_process(
        COMMAND ${HWPMC_CLANGXX} -fsanitize=fuzzer,address,undefined ${probe_dir}/probe.cpp
                -o ${probe_dir}/probe
        RESULT_VARIABLE probe_rc OUTPUT_QUIET ERROR_QUIET)
    if(probe_rc EQUAL 0)
        set(HWPMC_FUZZ_OK TRUE)
    endif()
endif()

set(HWPMC_FUZZ_DIR ${CMAKE_BINARY_DIR}/libhwpmc/fuzz)
set(HWPMC_FUZZ_SRC ${PROJECT_SOURCE_DIR}/libhwpmc/fuzz)
if(HWPMC_FUZZ_OK)
    message(STATUS "libFuzzer targets: with ${HWPMC_CLANGXX}")
    ExternalProject_Add(hwpmc_fuzzers
        SOURCE_DIR ${HWPMC_FUZZ_SRC}
        BINARY_DIR ${HWPMC_FUZZ_DIR}
        CMAKE_ARGS -DCMAKE_CXX_COMPILER=${HWPMC_CLANGXX}
                   -DCMAKE_BUILD_TYPE=RelWithDebInfo
                   -DHWPMC_SOURCE_DIR=${PROJECT_SOURCE_DIR}
        INSTALL_COMMAND ""
        BUILD_ALWAYS TRUE
        USES_TERMINAL_BUILD FALSE)
    # Inputs the fuzzer finds go to the build tree, never to the seeds.
    add_test(NAME libhwpmc_fuzz_spec
        COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                sh -c "mkdir -p \"$0\" && exec \"$1\" -max_total_time=${HWPMC_FUZZ_SECONDS} -max_len=128 -rss_limit_mb=2048 -print_final_stats=1 -dict=\"$2\" \"$0\" \"$3\""
                ${HWPMC_FUZZ_DIR}/corpus ${HWPMC_FUZZ_DIR}/spec_fuzzer
                ${HWPMC_FUZZ_SRC}/spec.dict ${HWPMC_FUZZ_SRC}/seeds)
    # Seeds: written by the fuzz build into pmclog-seeds/.
    add_test(NAME libhwpmc_fuzz_pmclog
        COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                sh -c "mkdir -p \"$0\" && exec \"$1\" -max_total_time=${HWPMC_FUZZ_SECONDS} -max_len=8192 -rss_limit_mb=2048 -print_final_stats=1 \"$0\" \"$2\""
                ${HWPMC_FUZZ_DIR}/pmclog-corpus ${HWPMC_FUZZ_DIR}/pmclog_fuzzer
                ${HWPMC_FUZZ_DIR}/pmclog-seeds)
else()
    message(STATUS "libFuzzer targets: skipped (no clang++ with -fsanitize=fuzzer)")
    foreach(t libhwpmc_fuzz_spec libhwpmc_fuzz_pmclog)
        add_test(NAME ${t}
            COMMAND sh -c "echo 'no clang++ with libFuzzer: fuzzing skipped'; exit 77")
        set_tests_properties(${t} PROPERTIES SKIP_RETURN_CODE 77)
    endforeach()
endif()
