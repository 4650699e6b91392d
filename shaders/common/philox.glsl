// Philox4x32-10 and the dropout decision: the GPU twin of src/reference/philox.c.
// Both must agree bit for bit (docs/SEMANTICS.md, "Philox dropout stream"); the GPU
// tests compare them. Include after #version; needs no extension.
#ifndef VKA_PHILOX_GLSL
#define VKA_PHILOX_GLSL

const uint PHILOX_M0 = 0xD2511F53u;
const uint PHILOX_M1 = 0xCD9E8D57u;
const uint PHILOX_W0 = 0x9E3779B9u;
const uint PHILOX_W1 = 0xBB67AE85u;

uvec4 philox4x32_10(uvec4 counter, uvec2 key)
{
    uvec4 c = counter;
    uvec2 k = key;
    for (int r = 0; r < 10; r++) {
        if (r > 0)
            k += uvec2(PHILOX_W0, PHILOX_W1);
        uint hi0, lo0, hi1, lo1;
        umulExtended(PHILOX_M0, c.x, hi0, lo0);
        umulExtended(PHILOX_M1, c.z, hi1, lo1);
        c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

// seed = (seed_lo, seed_hi); offset_mix = offset_lo ^ (offset_hi * 0x9E3779B9u),
// computed once on the host; threshold = vkattn_dropout_threshold(rate);
// bh = b * H + h. True when element (b, h, i, j) is kept.
bool dropout_keep(uvec2 seed, uint offset_mix, uint threshold, uint bh, uint i, uint j)
{
    uvec4 x = philox4x32_10(uvec4(j >> 2u, i, bh, offset_mix), seed);
    return (x[j & 3u] >> 8u) >= threshold;
}

#endif // VKA_PHILOX_GLSL
