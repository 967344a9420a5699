# Runs PROGRAM with ARGS (a ;-list) and fails unless it exits 0 AND its stdout matches EXPECT.
# CTest's PASS_REGULAR_EXPRESSION alone ignores the exit code; this does not.
#   cmake -DPROGRAM=... "-DARGS=a;b" -DEXPECT=regex -P expect_output.cmake
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}: a failing program fails its test")
endif()
if(NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${PROGRAM}'s output does not contain '${EXPECT}'")
endif()
