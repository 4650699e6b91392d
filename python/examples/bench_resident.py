"""Time one small MultiHeadAttention call from numpy against the same call on
device-resident inputs (vkattn.Tensor): medians of time.perf_counter over repeats.

    PYTHONPATH=python python3 python/examples/bench_resident.py [--repeats N]

Prints one line per mode; docs/PYTHON.md quotes a lavapipe run.
"""
import argparse
import statistics
import time

import numpy as np

import vkattn


def _medians_ms(fns, repeats):
    """Median time of each fn; the fns take turns, so a change of machine load hits
    them alike."""
    for fn in fns:
        fn()  # warm-up: pipelines, scratch
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [1e3 * statistics.median(ts) for ts in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=50)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--width", type=int, default=64)
    args = ap.parse_args()
    b, t, d = args.batch, args.seq, args.width
    with vkattn.Context() as ctx:
        mha = vkattn.MultiHeadAttention(num_heads=4, key_dim=d // 4, context=ctx)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((b, t, d)).astype(np.float32)
        tx = vkattn.Tensor(x, context=ctx)
        print("device: %s; MultiHeadAttention(num_heads=4, key_dim=%d), x (%d, %d, %d) "
              "float32, self-attention, median of %d"
              % (ctx.device_name, d // 4, b, t, d, args.repeats))
        modes = [
            ("numpy in, numpy out", lambda: mha(x, x)),
            ("Tensor in, Tensor out", lambda: mha(tx, tx)),
            ("Tensor in, .numpy() out", lambda: mha(tx, tx).numpy()),
        ]
        for (name, _), ms in zip(modes, _medians_ms([fn for _, fn in modes], args.repeats)):
            print("  %-24s %8.3f ms" % (name, ms))


if __name__ == "__main__":
    main()
