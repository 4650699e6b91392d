# Runs attnbench once for CTest and checks what a script would rely on:
#   cmake -DATTNBENCH=<exe> -DEXPECT=<exit status> "-DARGS=a|b" [-DKEYS=k1|k2]
#         [-DNUMBERS=k1|k2] [-DSTDERR_REGEX=...] [-DSTDOUT_REGEX=...]
#         [-DREMOVE_FILE=<path>] -P run_test.cmake
# KEYS: stdout must be one JSON value (an object, or an array of objects) with
# these members; NUMBERS: members that must be numbers (not null).
# REMOVE_FILE: deleted before the run (a first run that must start from nothing).
foreach(v ARGS KEYS NUMBERS)
  string(REPLACE "|" ";" ${v} "${${v}}")
endforeach()
# The test harness's profile switch (scripts/test.sh's mobile-min pass) reaches
# attnbench as its --profile flag. Not for the demo (no arguments), usage
# errors (the flag would change which error comes first), `peak`, which
# needs timestamps that a profile may take away, or `help` and `--version`,
# which open no device and take no flags.
set(command "")
if(ARGS)
  list(GET ARGS 0 command)
endif()
if(ARGS AND EXPECT STREQUAL "0" AND NOT command MATCHES "^(peak|help|--help|-h|version|--version)$"
   AND DEFINED ENV{VKATTN_TEST_PROFILE} AND NOT ARGS MATCHES "--profile")
  list(APPEND ARGS --profile $ENV{VKATTN_TEST_PROFILE})
endif()
# The test harness's device choice (VKATTN_TEST_DEVICE, a part of the name, as
# tests/gpu/harness.c) reaches attnbench as $VKATTN_DEVICE, below any --device.
if(DEFINED ENV{VKATTN_TEST_DEVICE} AND NOT DEFINED ENV{VKATTN_DEVICE})
  set(ENV{VKATTN_DEVICE} "$ENV{VKATTN_TEST_DEVICE}")
endif()
if(DEFINED REMOVE_FILE)
  file(REMOVE "${REMOVE_FILE}")
endif()
execute_process(COMMAND ${ATTNBENCH} ${ARGS}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "attnbench ${ARGS} -> ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT rc STREQUAL EXPECT)
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT}")
endif()
if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
  message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'")
endif()
if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
  message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'")
endif()
if(KEYS OR NUMBERS)
  string(JSON type ERROR_VARIABLE jerr TYPE "${out}")
  if(jerr)
    message(FATAL_ERROR "stdout is not JSON: ${jerr}")
  endif()
  set(obj "${out}")
  if(type STREQUAL "ARRAY")
    string(JSON obj GET "${out}" 0)
  endif()
  foreach(k IN LISTS KEYS NUMBERS)
    string(JSON t ERROR_VARIABLE jerr TYPE "${obj}" ${k})
    if(jerr)
      message(FATAL_ERROR "JSON has no member '${k}'")
    endif()
  endforeach()
  foreach(k IN LISTS NUMBERS)
    string(JSON t TYPE "${obj}" ${k})
    if(NOT t STREQUAL "NUMBER")
      message(FATAL_ERROR "JSON member '${k}' is ${t}, not a number")
    endif()
  endforeach()
endif()
