# cmake -DBUILD_DIR= -DSOURCE_DIR= -DWORK_DIR= -DC_COMPILER= -DGENERATOR= -P run_consumers.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. find_package(vkattn)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/find_package -B ${WORK_DIR}/fp -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/fp)
run(${WORK_DIR}/fp/consumer)

# 2. pkg-config
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig)
foreach(lib lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
  if(EXISTS ${prefix}/${lib}/pkgconfig/vkattn.pc)
    set(ENV{PKG_CONFIG_PATH} ${prefix}/${lib}/pkgconfig)
    set(libdir ${prefix}/${lib})
  endif()
endforeach()
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs vkattn OUTPUT_VARIABLE flags
  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not find vkattn.pc under ${prefix}")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 ${SOURCE_DIR}/consumer.c ${flags} -Wl,-rpath,${libdir}
    -o ${WORK_DIR}/pc_consumer)
run(${WORK_DIR}/pc_consumer)
