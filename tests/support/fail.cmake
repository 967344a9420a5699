# A test that must not pass because what it needs is missing: prints WHY and fails.
#   cmake -DWHY=... -P fail.cmake
message(FATAL_ERROR "${WHY}")
