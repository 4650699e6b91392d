# Each GPU test's TIMEOUT, derived from its quiet time in tests/TIMES.md (the
# one table of test times), and the split of the slow ones into parts.
#
#   vkattn_add_timed_test(NAME gpu.test_x COMMAND exe LABELS gpu)
# adds gpu.test_x, or gpu.test_x/1of3 ... gpu.test_x/3of3 if its row has 3
# parts (each runs with VKATTN_TEST_PART=k/3: tests/gpu/harness.h). A test
# without a row is a configure error: time it and add one.
#
# TIMEOUT = max(300 s, 10 x the quiet time of its largest part), the quiet
# time taken from the column of this build's kind: `asan` for a sanitizer
# build, `wine` for a cross build (3 x `linux` where that column has "-"),
# `linux` otherwise. 10x: a machine at load 6-8 made gpu.test_flash run more
# than 5x its quiet time (it timed out at 600 s); 300 s: so that a short test
# is not failed by a few seconds of start-up on a loaded machine.
set(VKATTN_TIMES_FILE ${PROJECT_SOURCE_DIR}/tests/TIMES.md)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${VKATTN_TIMES_FILE})
file(STRINGS ${VKATTN_TIMES_FILE} _vkattn_time_rows REGEX "^\\| [a-z]+\\.[a-z0-9_]+ \\|")
foreach(_row IN LISTS _vkattn_time_rows)
  # | test | parts | largest part % | linux mean | mobile-min | linux | asan | wine | ...
  string(REGEX MATCH "^\\| ([^ ]+) \\| ([0-9]+) \\| ([0-9]+) \\| [^|]+\\| [^|]+\\| ([0-9]+) \\| ([0-9-]+) \\| ([0-9-]+) \\|"
    _m "${_row}")
  if(NOT _m)
    message(FATAL_ERROR "tests/TIMES.md: cannot read the row: ${_row}")
  endif()
  set(VKATTN_TIME_${CMAKE_MATCH_1} "${CMAKE_MATCH_2};${CMAKE_MATCH_3};${CMAKE_MATCH_4};${CMAKE_MATCH_5};${CMAKE_MATCH_6}")
endforeach()

if(CMAKE_C_FLAGS MATCHES "-fsanitize")
  set(_vkattn_time_kind asan)
elseif(CMAKE_CROSSCOMPILING)
  set(_vkattn_time_kind wine)
else()
  set(_vkattn_time_kind linux)
endif()

function(vkattn_add_timed_test)
  cmake_parse_arguments(T "" "NAME;LABELS" "COMMAND" ${ARGN})
  if(NOT DEFINED VKATTN_TIME_${T_NAME})
    message(FATAL_ERROR "tests/TIMES.md has no row for ${T_NAME}: time it (ctest -R) and add one")
  endif()
  list(GET VKATTN_TIME_${T_NAME} 0 parts)
  list(GET VKATTN_TIME_${T_NAME} 1 share)
  list(GET VKATTN_TIME_${T_NAME} 2 linux)
  list(GET VKATTN_TIME_${T_NAME} 3 asan)
  list(GET VKATTN_TIME_${T_NAME} 4 wine)
  set(quiet ${${_vkattn_time_kind}})
  if(quiet STREQUAL "-")
    math(EXPR quiet "3 * ${linux}")
  endif()
  math(EXPR timeout "(10 * ${quiet} * ${share} + 99) / 100")
  if(timeout LESS 300)
    set(timeout 300)
  endif()
  if(parts EQUAL 1)
    add_test(NAME ${T_NAME} COMMAND ${T_COMMAND})
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${timeout})
    return()
  endif()
  foreach(k RANGE 1 ${parts})
    add_test(NAME ${T_NAME}/${k}of${parts} COMMAND ${T_COMMAND})
    set_tests_properties(${T_NAME}/${k}of${parts} PROPERTIES LABELS "${T_LABELS}"
      TIMEOUT ${timeout} ENVIRONMENT VKATTN_TEST_PART=${k}/${parts})
  endforeach()
endfunction()
