# Writes CTEST_FILE: one ctest test for each GoogleTest suite of TEST_EXECUTABLE (its
# --gtest_list_tests), named as the suite and running its tests, with TIMEOUT seconds. Run after
# each build of the executable (tests/CMakeLists.txt).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE status TIMEOUT 60)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${listing}")
endif()
# A suite's line starts in the first column and ends its name with '.' (the tests below it are
# indented); a typed or parameterised suite's may go on with a comment after the dot. A single
# test that runs for half the suite's limit aborts with its threads' stacks
# (support/hang_watchdog.hpp) rather than leave ctest only a timeout to report.
math(EXPR hang_seconds "${TIMEOUT} / 2")
string(REGEX MATCHALL "(^|\n)[^ \n#][^ \n]*\\." suites "${listing}")
set(content "")
foreach(suite IN LISTS suites)
  string(STRIP "${suite}" suite)
  string(REGEX REPLACE "\\.$" "" suite "${suite}")
  string(APPEND content
         "add_test([==[${suite}]==] [==[${TEST_EXECUTABLE}]==] [==[--gtest_filter=${suite}.*]==])\n"
         "set_tests_properties([==[${suite}]==] PROPERTIES TIMEOUT ${TIMEOUT}\n"
         "  ENVIRONMENT VERSA_TEST_HANG_SECONDS=${hang_seconds}\n"
         "  SKIP_REGULAR_EXPRESSION [==[versa_tests: every test skipped]==])\n")
endforeach()
file(WRITE "${CTEST_FILE}" "${content}")
