# Build-time dependencies, all from Debian packages (see README):
# Vulkan headers, volk's source, glslc and spirv-val. The Vulkan loader itself
# is opened at run time by volk, so libvulkan is not linked.
# VKATTN_GLSLC (cmake/ShaderFamilies.cmake) may name another glslc.
if(VKATTN_GLSLC)
  find_package(Vulkan REQUIRED)
else()
  find_package(Vulkan REQUIRED COMPONENTS glslc)
endif()

find_path(VKATTN_VOLK_DIR volk.c volk.h
  HINTS ${VOLK_DIR} ENV VOLK_DIR
  PATH_SUFFIXES volk
  DOC "Folder holding volk.c and volk.h (Debian: libvulkan-volk-dev)")
if(NOT VKATTN_VOLK_DIR)
  message(FATAL_ERROR "volk.c not found: install libvulkan-volk-dev or set VOLK_DIR")
endif()

find_program(VKATTN_SPIRV_VAL spirv-val REQUIRED
  DOC "spirv-val from spirv-tools, validates every compiled shader")

# jansson (Debian: libjansson-dev) reads the JSON header of safetensors files
# (vkattn/weights.h). Its own target name, so attnbench's PkgConfig::JANSSON
# and a consumer's cannot clash with it.
find_package(PkgConfig REQUIRED)
# VKATTN_SAFETENSORS=OFF builds without it (a platform with no jansson package,
# such as the mingw-w64 cross build): the weights.h functions that read or
# write a file then return VKATTN_ERROR_UNSUPPORTED (src/weights/no_json.c).
option(VKATTN_SAFETENSORS "safetensors files (vkattn/weights.h); needs jansson" ON)
if(VKATTN_SAFETENSORS)
  pkg_check_modules(VKATTN_JANSSON REQUIRED IMPORTED_TARGET GLOBAL jansson)
endif()
