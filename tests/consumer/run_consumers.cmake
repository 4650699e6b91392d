# cmake -DBUILD_DIR= -DSOURCE_DIR= -DWORK_DIR= -DC_COMPILER= -DGENERATOR= -DVOLK_DIR=
#       [-DPROJECT_DIR= -DWERROR=] -P run_consumers.cmake
# Installs a vkattn build into a scratch prefix and proves the install usable:
# find_package and pkg-config programs, programs with their own volk (both
# include orders), only vkattn_* symbols exported, the installed attnbench runs.
# With PROJECT_DIR it first configures and builds PROJECT_DIR as a static
# library (BUILD_SHARED_LIBS=OFF) into WORK_DIR/build and uses that instead.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(static OFF)
if(PROJECT_DIR)
  set(static ON)
  set(BUILD_DIR ${WORK_DIR}/build)
  run(${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${BUILD_DIR} -G ${GENERATOR}
      -DCMAKE_C_COMPILER=${C_COMPILER} -DBUILD_SHARED_LIBS=OFF -DVKATTN_BUILD_TESTS=OFF
      -DVKATTN_WERROR=${WERROR} -DVOLK_DIR=${VOLK_DIR})
  run(${CMAKE_COMMAND} --build ${BUILD_DIR} -j2)
endif()
set(prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

set(libdir "")
foreach(lib lib lib64 lib/x86_64-linux-gnu lib/aarch64-linux-gnu)
  if(EXISTS ${prefix}/${lib}/pkgconfig/vkattn.pc)
    set(libdir ${prefix}/${lib})
  endif()
endforeach()
if(NOT libdir)
  message(FATAL_ERROR "no vkattn.pc under ${prefix}")
endif()

# 1. Only vkattn_* symbols are exported: volk's vk* globals and vkattn's
#    internals (vka_*) stay private, shared or static.
find_program(NM nm REQUIRED)
if(static)
  set(lib ${libdir}/libvkattn.a)
  run(${NM} -g --defined-only ${lib})
else()
  file(GLOB lib ${libdir}/libvkattn.so.*.*.*)
  run(${NM} -D --defined-only ${lib})
endif()
set(nm_out "${run_out}")
# The installed library's soname carries the ABI version (docs/INTEGRATION.md,
# "ABI and versions"): libvkattn.so.0.<minor> while 0.x, as vkattn.pc's version says.
if(NOT static)
  file(STRINGS ${libdir}/pkgconfig/vkattn.pc pc_version REGEX "^Version: ")
  string(REGEX MATCH "([0-9]+)\\.([0-9]+)\\." pc_version "${pc_version}")
  if(CMAKE_MATCH_1 EQUAL 0)
    set(soname libvkattn.so.0.${CMAKE_MATCH_2})
  else()
    set(soname libvkattn.so.${CMAKE_MATCH_1})
  endif()
  find_program(READELF readelf REQUIRED)
  run(${READELF} -d ${lib})
  if(NOT run_out MATCHES "\\(SONAME\\)[^\n]*\\[${soname}\\]" OR NOT EXISTS ${libdir}/${soname})
    message(FATAL_ERROR "${lib}: soname is not ${soname}, or ${libdir}/${soname} is missing:\n${run_out}")
  endif()
  message(STATUS "installed soname: ${soname}")
endif()
set(run_out "${nm_out}")
string(REGEX MATCHALL "[^\n]+" lines "${run_out}")
set(leaked "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]* +[A-Za-z] +(.+)$" AND NOT CMAKE_MATCH_1 MATCHES "^vkattn_")
    list(APPEND leaked ${CMAKE_MATCH_1})
  endif()
endforeach()
if(leaked)
  message(FATAL_ERROR "${lib} exports symbols other than vkattn_*: ${leaked}")
endif()

# 2. find_package(vkattn), and apps with their own volk
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/find_package -B ${WORK_DIR}/fp -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER} -DVOLK_DIR=${VOLK_DIR})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/fp)
run(${WORK_DIR}/fp/consumer)
run(${WORK_DIR}/fp/volk_first)
run(${WORK_DIR}/fp/vkattn_first)

# 3. pkg-config
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${libdir}/pkgconfig)
set(pc_static "")
if(static)
  set(pc_static --static)
endif()
execute_process(COMMAND ${PKG_CONFIG} ${pc_static} --cflags --libs vkattn OUTPUT_VARIABLE flags
  RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not read ${libdir}/pkgconfig/vkattn.pc")
endif()
# vulkan is a public requirement: the public headers include vulkan_core.h
execute_process(COMMAND ${PKG_CONFIG} --print-requires vkattn OUTPUT_VARIABLE requires
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT requires MATCHES "(^|\n)vulkan")
  message(FATAL_ERROR "vkattn.pc: vulkan is not in Requires (got: ${requires})")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} -std=c11 ${SOURCE_DIR}/consumer.c ${flags} -Wl,-rpath,${libdir}
    -o ${WORK_DIR}/pc_consumer)
run(${WORK_DIR}/pc_consumer)

# 4. The installed attnbench finds the installed library (install RPATH);
#    `help` needs no device.
if(EXISTS ${prefix}/bin/attnbench)
  run(${prefix}/bin/attnbench help)
  if(NOT run_out MATCHES "usage")
    message(FATAL_ERROR "installed attnbench help printed no usage:\n${run_out}")
  endif()
endif()
