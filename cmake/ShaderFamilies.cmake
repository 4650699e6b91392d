# The shader compiler, and which cooperative-matrix kernel families it builds.
#
# Every glslc builds the plain kernels, the NV coopmat1 ones
# (GL_NV_cooperative_matrix) and their emulation. Two families need a newer
# one (Debian 13's shaderc 2025.2, a Vulkan SDK), and a kernel's file name
# says which it belongs to:
#   *_coopmat_khr.comp   GL_KHR_cooperative_matrix (AMD, Intel, NVIDIA, phones)
#   *_coopmat2_nv.comp   GL_NV_cooperative_matrix2 (NVIDIA; SPIR-V 1.6, so
#                        compiled for vulkan1.3)
# A tiny probe per family (cmake/probes/) is compiled and passed through
# spirv-val at configure time; a family whose probe fails is embedded empty
# and the library reports it as not built (vkattn_context_info).
#
# VKATTN_GLSLC names another glslc (a command; a list is its words).
# scripts/newer-glslc.sh makes a Debian 13 one usable on Debian 12. Pair it
# with the spirv-val of the same toolchain (VKATTN_SPIRV_VAL): an older
# spirv-val refuses the KHR and NV2 capabilities.
set(VKATTN_GLSLC "" CACHE STRING
  "glslc command to compile the shaders with (default: the one find_package(Vulkan) found)")
if(VKATTN_GLSLC)
  set(VKATTN_GLSLC_COMMAND ${VKATTN_GLSLC})
else()
  set(VKATTN_GLSLC_COMMAND ${Vulkan_GLSLC_EXECUTABLE})
endif()

set(VKATTN_SHADER_FAMILIES coopmat_khr coopmat2_nv)
set(VKATTN_FAMILY_ENV_coopmat_khr vulkan1.1)
set(VKATTN_FAMILY_ENV_coopmat2_nv vulkan1.3)

# vkattn_shader_family(<shader name> <family var> <env var>): the family a
# kernel belongs to (empty for the ones every glslc builds) and its target.
function(vkattn_shader_family name family_var env_var)
  set(family "")
  set(env ${VKATTN_SPIRV_ENV})
  foreach(f IN LISTS VKATTN_SHADER_FAMILIES)
    if(name MATCHES "_${f}$")
      set(family ${f})
      set(env ${VKATTN_FAMILY_ENV_${f}})
    endif()
  endforeach()
  set(${family_var} ${family} PARENT_SCOPE)
  set(${env_var} ${env} PARENT_SCOPE)
endfunction()

# Probed once per glslc and spirv-val (cached with them as the key).
set(probe_key "${VKATTN_GLSLC_COMMAND}|${VKATTN_SPIRV_VAL}")
if(NOT probe_key STREQUAL "${VKATTN_SHADER_FAMILIES_KEY}")
  set(built "")
  set(refused "")
  set(probe_dir ${CMAKE_BINARY_DIR}/shader_probes)
  file(MAKE_DIRECTORY ${probe_dir})
  foreach(f IN LISTS VKATTN_SHADER_FAMILIES)
    set(env ${VKATTN_FAMILY_ENV_${f}})
    execute_process(
      COMMAND ${VKATTN_GLSLC_COMMAND} --target-env=${env} -Werror -O
              -o ${probe_dir}/${f}.spv ${PROJECT_SOURCE_DIR}/cmake/probes/${f}.comp
      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      execute_process(COMMAND ${VKATTN_SPIRV_VAL} --target-env ${env} ${probe_dir}/${f}.spv
        RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(NOT rc EQUAL 0)
        list(APPEND refused "${f} (spirv-val refuses it)")
      endif()
    else()
      list(APPEND refused "${f} (glslc refuses it)")
    endif()
    if(rc EQUAL 0)
      list(APPEND built ${f})
    endif()
  endforeach()
  set(VKATTN_SHADER_FAMILIES_BUILT "${built}" CACHE INTERNAL "kernel families this glslc builds")
  set(VKATTN_SHADER_FAMILIES_REFUSED "${refused}" CACHE INTERNAL "and the ones it does not")
  set(VKATTN_SHADER_FAMILIES_KEY "${probe_key}" CACHE INTERNAL "the tools they were probed with")
endif()
set(built_text coopmat_nv coopmat_emu ${VKATTN_SHADER_FAMILIES_BUILT})
string(REPLACE ";" ", " built_text "${built_text}")
if(VKATTN_SHADER_FAMILIES_REFUSED)
  string(REPLACE ";" ", " refused_text "${VKATTN_SHADER_FAMILIES_REFUSED}")
  set(built_text "${built_text}; not built: ${refused_text}")
endif()
message(STATUS "vkattn shader families: ${built_text}")
