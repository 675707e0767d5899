# Tests of the ways hwpmc is installed (ctest; no guest): the module built
# by DKMS for every kernel of the matrix in a throwaway tree, the same as
# the one the kselftests load (scripts/dkms-test).  Each exits 4 (skipped)
# where its tools or the matrix's modules are missing.
add_test(NAME dkms_build COMMAND ${PROJECT_SOURCE_DIR}/scripts/dkms-test)
set_tests_properties(dkms_build PROPERTIES SKIP_RETURN_CODE 4 TIMEOUT 900 RUN_SERIAL ON)
