# Windows x64 from a Debian machine: mingw-w64 (gcc 12, win32 threads), wine64
# to run what was built (scripts/cross-test.sh).
#   cmake -S . -B build-mingw \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64-x86_64.cmake \
#     -DVKATTN_SAFETENSORS=OFF -DVKATTN_TEST_MINICMOCKA=ON
# (Debian has no jansson, cairo or cmocka for mingw: see docs/INTEGRATION.md;
# attnbench.exe is built without case files and pictures, docs/ATTNBENCH.md.)
# vkattn.dll opens vulkan-1.dll at run time (volk). The Vulkan headers and
# volk's source are the host's (architecture-independent text), staged in the
# build tree so that no other host header is seen. The tests that play an
# app with its own Vulkan device link an import library of vulkan-1.dll's
# core functions, made here with dlltool from the headers (there is no
# Windows loader package to take one from).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(_triplet x86_64-w64-mingw32)
find_program(_mingw_cc NAMES ${_triplet}-gcc-win32 ${_triplet}-gcc REQUIRED)
set(CMAKE_C_COMPILER ${_mingw_cc})
set(CMAKE_RC_COMPILER ${_triplet}-windres)
set(CMAKE_FIND_ROOT_PATH /usr/${_triplet})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} /usr/${_triplet}/lib/pkgconfig)
# The Universal CRT (ucrtbase.dll, Windows 10's own and what MSVC links), not
# msvcrt.dll: C11's timespec_get is there. GCC 12 has no -mcrtdll, so its
# specs are rewritten to link ucrt in place of msvcrt. ISO C99 printf formats
# (%zu, %llu) in every program, as in the library; no libgcc DLL to ship.
execute_process(COMMAND ${CMAKE_C_COMPILER} -dumpspecs OUTPUT_VARIABLE _specs
  RESULT_VARIABLE _r)
if(NOT _r EQUAL 0)
  message(FATAL_ERROR "${CMAKE_C_COMPILER} -dumpspecs failed")
endif()
string(REPLACE "-lmsvcrt" "-lucrt" _specs "${_specs}")
set(_specs_file ${CMAKE_BINARY_DIR}/mingw-ucrt.specs)
file(WRITE ${_specs_file} "${_specs}")
set(CMAKE_C_FLAGS_INIT "-D_UCRT -D__USE_MINGW_ANSI_STDIO=1 -specs=${_specs_file}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc -specs=${_specs_file}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc -specs=${_specs_file}")

if(CMAKE_BINARY_DIR AND NOT CMAKE_BINARY_DIR MATCHES "CMakeScratch|CMakeTmp")
  set(_stage ${CMAKE_BINARY_DIR}/mingw-stage)
  file(MAKE_DIRECTORY ${_stage}/include ${_stage}/volk ${_stage}/lib)
  foreach(_d vulkan vk_video)
    if(EXISTS /usr/include/${_d} AND NOT EXISTS ${_stage}/include/${_d})
      file(CREATE_LINK /usr/include/${_d} ${_stage}/include/${_d} SYMBOLIC)
    endif()
  endforeach()
  foreach(_f volk.c volk.h)
    if(EXISTS /usr/include/${_f} AND NOT EXISTS ${_stage}/volk/${_f})
      file(CREATE_LINK /usr/include/${_f} ${_stage}/volk/${_f} SYMBOLIC)
    endif()
  endforeach()
  # vulkan-1.dll's import library: every core (VK_VERSION_1_x) prototype
  set(_implib ${_stage}/lib/libvulkan-1.dll.a)
  if(NOT EXISTS ${_implib} AND EXISTS /usr/include/vulkan/vulkan_core.h)
    file(STRINGS /usr/include/vulkan/vulkan_core.h _lines
      REGEX "^(VKAPI_ATTR .* VKAPI_CALL vk[A-Za-z0-9]+\\(|#define VK_KHR_surface 1)")
    set(_def "LIBRARY vulkan-1.dll\nEXPORTS\n")
    foreach(_l IN LISTS _lines)
      if(_l MATCHES "VK_KHR_surface")
        break()
      endif()
      string(REGEX REPLACE ".*VKAPI_CALL (vk[A-Za-z0-9]+)\\(.*" "\\1" _fn "${_l}")
      string(APPEND _def "    ${_fn}\n")
    endforeach()
    file(WRITE ${_stage}/lib/vulkan-1.def "${_def}")
    execute_process(COMMAND ${_triplet}-dlltool -d ${_stage}/lib/vulkan-1.def -l ${_implib}
      RESULT_VARIABLE _r)
    if(NOT _r EQUAL 0)
      message(FATAL_ERROR "dlltool could not make ${_implib}")
    endif()
  endif()
  set(Vulkan_INCLUDE_DIR ${_stage}/include CACHE PATH "Vulkan headers (the host's, staged)")
  set(Vulkan_LIBRARY ${_implib} CACHE FILEPATH "vulkan-1.dll import library (made by dlltool)")
  set(VKATTN_VOLK_DIR ${_stage}/volk CACHE PATH "volk's source (the host's, staged)")
endif()

# ctest runs the programs under wine64 (its WINEPREFIX from the environment)
find_program(VKATTN_WINE64 NAMES wine64 PATHS /usr/lib/wine NO_CMAKE_FIND_ROOT_PATH)
if(VKATTN_WINE64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKATTN_WINE64})
endif()
