#version 450
// flash_backward_kv.comp with the forward's q, k and v each f16 or f32 (FB_F16,
// spec constants VKA_FB_SPEC_*_F16), for devices with 16-bit storage: f16
// values are widened exactly on load, so the results are the f32 kernel's on
// those values, without an f32 copy of them.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#define FB_F16 1
#define FB_KV 1
#include "flash_backward_body.glsl"
