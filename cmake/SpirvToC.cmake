# cmake -DIN=x.spv -DOUT=x.c -DNAME=symbol -P SpirvToC.cmake
# Writes the SPIR-V words as a uint32_t array (little-endian, as glslc emits).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR rem "${nhex} % 8")
if(NOT rem EQUAL 0 OR nhex EQUAL 0)
  message(FATAL_ERROR "${IN}: not a whole number of 32-bit words")
endif()
# reorder each little-endian word's bytes: aabbccdd -> 0xddccbbaa
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n    " words "${words}")
math(EXPR nwords "${nhex} / 8")
file(WRITE ${OUT} "/* Generated from ${IN}; do not edit. */
#include <stddef.h>
#include <stdint.h>
const uint32_t ${NAME}[${nwords}] = {
    ${words}
};
const size_t ${NAME}_size = sizeof ${NAME};
")
