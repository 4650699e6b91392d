// Head split (B, T, H, d) -> (B, H, T, d) and merge, its inverse: a pure
// permutation copy, optionally of rows [t0, t0 + T) of a (B, seq_all, H, d)
// tensor (a chunk of a longer sequence). Each invocation walks output elements with a grid stride,
// so any element count fits the device's workgroup-count limit; consecutive
// invocations write consecutive outputs and read consecutive inputs within a
// d-long row. All indices are below the element count, which the host checked
// to fit 32 bits.
//
// The body of heads.comp and heads_f16.comp. The including shader declares
// the specialization constants, the push block `p`, and VKA_LOAD(i) (input
// element i as float) and VKA_STORE(i, v) (output element i); each output
// element is stored by one invocation.

void main()
{
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint o = gl_GlobalInvocationID.x; o < p.count; o += stride) {
        uint c = o % p.head_dim;
        uint row = o / p.head_dim;
        if (SPLIT) { // o indexes (B, H, T, d); read (B, seq_all, H, d)
            uint t = row % p.seq, bh = row / p.seq;
            uint h = bh % p.heads, b = bh / p.heads;
            VKA_STORE(o, VKA_LOAD(((b * p.seq_all + p.t0 + t) * p.heads + h) * p.head_dim + c));
        } else {     // o indexes (B, T, H, d); read (B, H, T, d), write (B, seq_all, H, d)
            uint h = row % p.heads, bt = row / p.heads;
            uint t = bt % p.seq, b = bt / p.seq;
            VKA_STORE(((b * p.seq_all + p.t0 + t) * p.heads + h) * p.head_dim + c,
                      VKA_LOAD(((b * p.heads + h) * p.seq + t) * p.head_dim + c));
        }
    }
}
