# Install headers, library, vkattnConfig.cmake (+ version) and vkattn.pc.
include(CMakePackageConfigHelpers)

install(TARGETS vkattn EXPORT vkattnTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/vkattn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/include/vkattn/version.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vkattn)

set(VKATTN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkattn)
install(EXPORT vkattnTargets NAMESPACE vkattn:: DESTINATION ${VKATTN_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkattnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vkattnConfig.cmake INSTALL_DESTINATION ${VKATTN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vkattnConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vkattnConfig.cmake ${PROJECT_BINARY_DIR}/vkattnConfigVersion.cmake
  DESTINATION ${VKATTN_CMAKE_DIR})

if(BUILD_SHARED_LIBS)
  set(VKATTN_PC_CFLAGS "")
  set(VKATTN_PC_PRIVATE_LIBS "-ldl -lm -lpthread")
else()
  set(VKATTN_PC_CFLAGS "-DVKATTN_STATIC")
  set(VKATTN_PC_PRIVATE_LIBS "-ldl -lm -lpthread")
endif()
# vulkan is public: vkattn's headers include <vulkan/vulkan_core.h>, so an app
# needs its -I (it also gets -lvulkan, which an app that loads Vulkan itself
# does not use). jansson only where the safetensors reader is built.
set(VKATTN_PC_PRIVATE_REQUIRES "")
if(VKATTN_SAFETENSORS)
  set(VKATTN_PC_PRIVATE_REQUIRES "jansson")
endif()
# relocatable: the prefix is found from the .pc file's own location
file(RELATIVE_PATH VKATTN_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" VKATTN_PC_TO_PREFIX "${VKATTN_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkattn.pc.in ${PROJECT_BINARY_DIR}/vkattn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vkattn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
