# Linux arm64 from a Debian x86-64 machine: gcc-aarch64-linux-gnu, with the
# arm64 -dev packages from Debian's multiarch (scripts/install-deps.sh --cross:
# libcmocka-dev:arm64, libjansson-dev:arm64, libcairo2-dev:arm64,
# libvulkan-dev:arm64), and qemu-aarch64-static to run what was built.
#   cmake -S . -B build-arm64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# Shaders compile on the host (glslc, spirv-val: SPIR-V is the same for every
# target); ctest runs each test through qemu (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Debian 12's aarch64 GCC 12.2 crashes (internal compiler error in
# vect_transform_reduction) vectorizing the float max reductions of
# examples/bahdanau.c and generate.c at -O2: no loop vectorizer for it.
set(CMAKE_C_FLAGS_INIT -fno-tree-loop-vectorize)

# Libraries from /usr/lib/aarch64-linux-gnu (multiarch) and the cross
# toolchain's own root; programs (glslc, spirv-val) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# pkg-config sees the arm64 .pc files only (never the host's)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)

find_program(VKATTN_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64 NO_CMAKE_FIND_ROOT_PATH)
if(VKATTN_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VKATTN_QEMU_AARCH64})
endif()
