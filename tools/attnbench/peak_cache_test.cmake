# The peak cache end to end (peak_cache.h), in its own cache folder:
#   cmake -DATTNBENCH=<exe> -DOUT=<folder> -P peak_cache_test.cmake
# 1. a bench on an empty cache measures once and writes the file;
# 2. that file rewritten in the first format ({"device", "fma_gflops",
#    "copy_gbps"}) with rates no device reaches still reads, and a
#    --remeasure-peak run adds its (lower) measurement without replacing it:
#    the fractions divide by the best, of unknown date, best of 2;
# 3. a file of 9 measurements keeps the newest 8: the oldest (the highest)
#    drops out, and the table says which peak and when.
file(REMOVE_RECURSE "${OUT}")
set(ENV{XDG_CACHE_HOME} "${OUT}")
set(bench bench matmul --m 8 --n 8 --k 8 --warmup 0 --repeat 1)
function(run expect_rc)
  execute_process(COMMAND ${ATTNBENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
  message(STATUS "attnbench ${ARGN} -> ${rc}\n${out}${err}")
  if(NOT rc STREQUAL expect_rc)
    message(FATAL_ERROR "exit status ${rc}, expected ${expect_rc}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
function(expect_json value)
  string(JSON got GET "${out}" ${ARGN})
  if(NOT got STREQUAL value)
    message(FATAL_ERROR "${ARGN}: '${got}', expected '${value}'")
  endif()
endfunction()

run(0 ${bench} --json)
file(GLOB files "${OUT}/vkattn/peak-*.json")
list(LENGTH files n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR "${n} peak files in ${OUT}/vkattn, expected 1")
endif()
expect_json(1 peak measurements)

file(WRITE "${files}" "{\"device\": \"x\", \"fma_gflops\": 1000000, \"copy_gbps\": 1000000}\n")
run(0 ${bench} --json --remeasure-peak)
expect_json(1000000.0 peak fma_gflops)
expect_json(1000000.0 peak copy_gbps)
expect_json(2 peak measurements)
string(JSON t TYPE "${out}" peak fma_measured)
if(NOT t STREQUAL "NULL")
  message(FATAL_ERROR "peak.fma_measured is ${t}, expected null (the first format has no date)")
endif()

set(list "{\"date\": \"2026-01-01T00:00:00Z\", \"fma_gflops\": 5000, \"copy_gbps\": 5000}")
foreach(i RANGE 1 8)
  string(APPEND list ", {\"date\": \"2026-01-0${i}T00:00:00Z\", \"fma_gflops\": ${i}, \"copy_gbps\": 0.${i}}")
endforeach()
file(WRITE "${files}" "{\"device\": \"x\", \"fma_gflops\": 5000, \"copy_gbps\": 5000, \"measurements\": [${list}]}\n")
run(0 ${bench})
if(NOT out MATCHES "\n%FMA and %copy of the peak 8\\.00 GFLOP/s FMA measured 2026-01-08T00:00:00Z, 0\\.80 GB/s copy measured 2026-01-08T00:00:00Z, on [^\n]+ \\(driver [^\n]+\\), best of 8 measurements\n")
  message(FATAL_ERROR "the table does not name the peak it divides by")
endif()
