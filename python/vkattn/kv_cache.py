"""vkattn.KVCache and vkattn.sdpa_decode: key/value caches for generation
(vkattn/kv_cache.h, vkattn/decode.h).

A KVCache made for a MultiHeadAttention or GroupedQueryAttention layer is passed
to the layer's call as cache=: each call appends its tokens' keys and values and
attends over everything cached. A raw cache takes append(k, v), then
sdpa_decode(q, cache) attends the new queries over it.
"""
import weakref

import numpy as np

from ._arrays import Tensors, f32, mask01
from ._lib import RUN_NOW, ffi, lib
from ._owned import ContextOwned
from ._specs import _positive
from .context import default_context
from .errors import check, invalid
from .tensor import Tensor, check_contexts

_DTYPES = {"float32": 0, "float16": 1, "int8": 2, "bfloat16": 3}


def _destroy(handle):
    lib.vkattn_kv_cache_destroy(handle)


def _layer_dims(layer, who):
    """(kv_heads, key_dim, value_dim) of the cache a layer's cached call needs."""
    spec = getattr(layer, "_spec", None)
    kind = getattr(spec, "kind", None)
    if kind == "mha":
        return spec.num_heads, spec.key_dim, spec.value_dim
    if kind == "gqa":
        return spec.num_key_value_heads, spec.head_dim, spec.head_dim
    raise invalid("%s: layer must be a MultiHeadAttention or GroupedQueryAttention; got %r"
                  % (who, layer))


class KVCache(ContextOwned):
    """Keys and values of up to `capacity` tokens for each of `batch` sequences.

    KVCache(layer, capacity=, batch=1): for that layer's cached calls (its K/V heads and
    head widths; the layer's context). KVCache(kv_heads=, key_dim=, value_dim=None,
    capacity=, batch=1, context=None): for append() and vkattn.sdpa_decode.
    dtype: "float32", "float16" or "bfloat16" (half the memory; needs even key_dim and
    value_dim; rows rounded to nearest even) or "int8" (each token's row of each K/V head as int8 with one float32 scale, about a
    quarter of the memory; key_dim and value_dim multiples of 4; docs/SEMANTICS.md bounds
    what the quantization moves).
    lengths: each sequence's cached tokens (a download); reset() empties them.
    Freed by close() (or a with-block), or with its context.
    """

    _what = "KVCache"

    def __init__(self, layer=None, *, capacity, batch=1, kv_heads=None, key_dim=None,
                 value_dim=None, dtype="float32", context=None):
        who = "KVCache"
        if layer is not None:
            if (kv_heads, key_dim, value_dim, context) != (None,) * 4:
                raise invalid("%s: give either layer or kv_heads/key_dim/value_dim/context, "
                              "not both (the layer fixes them)" % who)
            kv_heads, key_dim, value_dim = _layer_dims(layer, who)
            if layer._context is None:  # the layer's first call would pick this one
                layer._context = default_context()
            context = layer._context
        else:
            if kv_heads is None or key_dim is None:
                raise invalid("%s: without a layer, kv_heads and key_dim are required" % who)
            kv_heads = _positive(kv_heads, "kv_heads", who)
            key_dim = _positive(key_dim, "key_dim", who)
            value_dim = key_dim if value_dim is None else _positive(value_dim, "value_dim", who)
        if context is not None and not hasattr(context, "_ptr"):
            raise invalid("%s: context must be a vkattn.Context; got %r" % (who, context))
        capacity = _positive(capacity, "capacity", who)
        batch = _positive(batch, "batch", who)
        for name, v in (("capacity", capacity), ("batch", batch)):
            if v > 2**32 - 1:
                raise invalid("%s: %s must be < 2**32; got %d" % (who, name, v))
        name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
        if name not in _DTYPES:
            raise invalid("%s: dtype must be \"float32\", \"float16\", \"bfloat16\" or "
                          "\"int8\"; got %r" % (who, dtype))
        self._context = context if context is not None else default_context()
        self._layer = None if layer is None else weakref.ref(layer)
        self.batch, self.capacity, self.kv_heads = batch, capacity, kv_heads
        self.key_dim, self.value_dim, self.dtype = key_dim, value_dim, name
        desc = ffi.new("vkattn_kv_cache_desc *", {
            "batch": batch, "kv_heads": kv_heads, "capacity": capacity, "key_dim": key_dim,
            "value_dim": value_dim, "dtype": _DTYPES[name]})
        ctx = self._context
        out = ffi.new("vkattn_kv_cache **")
        with ctx._lock:
            check(lib.vkattn_kv_cache_create(ctx._ptr(), desc, out), ctx._handle)
            self._own(out[0], _destroy)

    def __repr__(self):
        return "<vkattn.KVCache batch=%d capacity=%d kv_heads=%d key_dim=%d value_dim=%d %s%s>" % (
            self.batch, self.capacity, self.kv_heads, self.key_dim, self.value_dim, self.dtype,
            " closed" if self.closed else "")

    # -- lengths

    def _lengths(self):
        out = np.empty(self.batch, np.uint32)
        flag = ffi.new("bool *")
        with self._context._lock:
            check(lib.vkattn_kv_cache_lengths(self._ptr("KVCache.lengths"),
                                              ffi.cast("uint32_t *", out.ctypes.data), flag),
                  self._context._handle)
        return out, bool(flag[0])

    @property
    def lengths(self):
        """Tokens cached per sequence, a (batch,) uint32 array (downloaded)."""
        return self._lengths()[0]

    @property
    def overflowed(self):
        """True once an append did not fit (cleared by reset() and set_lengths())."""
        return self._lengths()[1]

    def set_lengths(self, lengths):
        """Sets each sequence's length (<= capacity), e.g. to drop the last tokens."""
        a = np.asarray(lengths)
        if a.shape not in ((), (self.batch,)) or not np.issubdtype(a.dtype, np.integer) \
                or (a < 0).any() or (a > self.capacity).any():
            raise invalid("KVCache.set_lengths: lengths must be ints in [0, capacity = %d], "
                          "one or one per sequence (%d); got %r"
                          % (self.capacity, self.batch, lengths))
        a = np.ascontiguousarray(np.broadcast_to(a, (self.batch,)), np.uint32)
        with self._context._lock:
            check(lib.vkattn_kv_cache_set_lengths(self._ptr("KVCache.set_lengths"),
                                                  ffi.cast("const uint32_t *", a.ctypes.data)),
                  self._context._handle)

    def reset(self, seq=None):
        """Every sequence (seq None) or sequence seq back to length 0."""
        if seq is None:
            code = 2**32 - 1  # VKATTN_KV_CACHE_ALL
        elif isinstance(seq, bool) or not isinstance(seq, (int, np.integer)) \
                or not 0 <= seq < self.batch:
            raise invalid("KVCache.reset: seq must be None or an int in [0, batch = %d); "
                          "got %r" % (self.batch, seq))
        else:
            code = int(seq)
        with self._context._lock:
            check(lib.vkattn_kv_cache_reset_record(self._ptr("KVCache.reset"), RUN_NOW, code),
                  self._context._handle)

    # -- raw use

    def append(self, k, v):
        """Appends k (B, kv_heads, Tnew, key_dim) and v (B, kv_heads, Tnew, value_dim), numpy
        or Tensor, to every sequence."""
        who = "KVCache.append"
        k = f32(k, "%s: k" % who, (4,), device=True)
        v = f32(v, "%s: v" % who, (4,), device=True)
        want_k = (self.batch, self.kv_heads, k.shape[2], self.key_dim)
        if k.shape != want_k:
            raise invalid("%s: k has shape %s; expected (batch, kv_heads, Tnew, key_dim) = %s"
                          % (who, k.shape, want_k))
        want_v = want_k[:3] + (self.value_dim,)
        if v.shape != want_v:
            raise invalid("%s: v has shape %s; expected (batch, kv_heads, Tnew, value_dim) = %s"
                          % (who, v.shape, want_v))
        ctx = self._context
        check_contexts(ctx, who, (("k", k), ("v", v)))
        with ctx._lock, Tensors(ctx) as ts:
            io = ffi.new("vkattn_kv_append_io *")
            io.k, io.v = ts.upload(k), ts.upload(v)
            check(lib.vkattn_kv_cache_append_record(self._ptr(who), RUN_NOW, io), ctx._handle)

    def numpy(self):
        """(K, V) as numpy arrays (B, kv_heads, capacity, key_dim / value_dim), rows past
        each length undefined: what the cache holds, in its dtype (a bfloat16 cache's as
        uint16 bit patterns: vkattn.bfloat16.to_float32 reads them); an int8 cache's values
        as float32, each row's int8 times its scale (what decode reads)."""
        d = lib.vkattn_kv_cache_get_desc(self._ptr("KVCache.numpy"))
        out = []
        with self._context._lock:
            for t, width in ((d.keys, self.key_dim), (d.values, self.value_dim)):
                rows = (self.batch, self.kv_heads, self.capacity)
                if self.dtype == "int8":  # width/4 words of int8 per row, then a scale per row
                    words = np.empty(int(np.prod(rows)) * (width // 4 + 1), np.uint32)
                else:
                    words = np.empty(rows + (width,), np.uint16 if self.dtype == "bfloat16"
                                     else np.dtype(self.dtype))
                check(lib.vkattn_tensor_download_raw(t, ffi.cast("void *", words.ctypes.data),
                                                     0, words.size), self._context._handle)
                out.append(_int8_values(words, rows, width) if self.dtype == "int8" else words)
        return tuple(out)


def _int8_values(words, rows, width):
    """An int8 cache's storage (kv_cache.h: the rows' int8, element e of a row in byte
    e % 4 of its words, then one float32 scale per row) as float32 values."""
    n = int(np.prod(rows))
    q = words[:n * width // 4].view(np.int8).reshape(rows + (width,))  # little-endian bytes
    scale = words[n * width // 4:].view(np.float32).reshape(rows + (1,))
    return q.astype(np.float32) * scale


def sdpa_decode(q, cache, *, scale=None, value_mask=None, sliding_window=None, num_splits=0):
    """Attention of q (B, H, Tq, dk), Tq <= 64 new queries per sequence, over the first
    lengths[b] keys of cache, the last Tq of them the queries' own tokens (append them
    first): vkattn.sdpa with causal="bottom_right" over the cached keys. H is a multiple
    of cache.kv_heads. value_mask: optional (B, capacity), 1 = may attend. Returns out
    (B, H, Tq, value_dim) as numpy, or as a Tensor when q is one."""
    who = "sdpa_decode"
    if not isinstance(cache, KVCache):
        raise invalid("%s: cache must be a vkattn.KVCache; got %r" % (who, cache))
    q = f32(q, "%s: q" % who, (4,), device=True)
    b, h, tq, dk = q.shape
    if b != cache.batch or dk != cache.key_dim:
        raise invalid("%s: q has shape %s; its batch and width must be the cache's (%d, %d)"
                      % (who, q.shape, cache.batch, cache.key_dim))
    if h % cache.kv_heads:
        raise invalid("%s: q has %d heads; must be a multiple of the cache's kv_heads %d"
                      % (who, h, cache.kv_heads))
    if tq > 64:
        raise invalid("%s: q has %d rows (Tq); at most 64 per call (VKATTN_DECODE_MAX_TQ)"
                      % (who, tq))
    p = ffi.new("vkattn_sdpa_decode_params *")
    p.batch, p.heads, p.tq, p.kv_heads = b, h, tq, cache.kv_heads
    p.capacity, p.dk, p.dv = cache.capacity, dk, cache.value_dim
    p.scale = 0.0 if scale is None else float(scale)
    if scale is not None and (p.scale == 0.0 or not np.isfinite(p.scale)):
        raise invalid("%s: scale must be finite and nonzero (None = 1/sqrt(dk)); got %r"
                      % (who, scale))
    if sliding_window is not None:
        p.sliding_window = _positive(sliding_window, "sliding_window", who)
    p.num_splits = _positive(num_splits, "num_splits", who) if num_splits else 0
    vm = mask01(value_mask, "%s: value_mask" % who, (1, 2))
    if vm is not None:
        try:
            vm = np.ascontiguousarray(np.broadcast_to(vm, (b, cache.capacity)))
        except ValueError:
            raise invalid("%s: value_mask has shape %s; expected (B, capacity) = %s"
                          % (who, vm.shape, (b, cache.capacity))) from None
        p.has_value_mask = True
    ctx = cache.context
    check_contexts(ctx, who, (("q", q),))
    with ctx._lock, Tensors(ctx, keep=isinstance(q, Tensor)) as ts:
        io = ffi.new("vkattn_sdpa_decode_io *")
        io.q, io.cache, io.value_mask = ts.upload(q), cache._ptr(who), ts.upload(vm)
        io.out = ts.empty((b, h, tq, cache.value_dim), result=True)
        check(lib.vkattn_sdpa_decode_record(ctx._ptr(), RUN_NOW, p, io), ctx._handle)
        return ts.download(io.out, (b, h, tq, cache.value_dim))


def reference_decode(q, k, v, lengths, *, scale=None, value_mask=None, sliding_window=None):
    """sdpa_decode's CPU reference (double accumulation) on host arrays: q (B, H, Tq, dk),
    k (B, Hkv, capacity, dk), v (B, Hkv, capacity, dv), lengths (B,)."""
    who = "reference.sdpa_decode"
    q, k, v = (f32(x, "%s: %s" % (who, n), (4,)) for x, n in ((q, "q"), (k, "k"), (v, "v")))
    b, h, tq, dk = q.shape
    lens = np.ascontiguousarray(np.broadcast_to(np.asarray(lengths, np.uint32), (b,)))
    p = ffi.new("vkattn_sdpa_decode_params *")
    p.batch, p.heads, p.tq, p.kv_heads = b, h, tq, k.shape[1]
    p.capacity, p.dk, p.dv = k.shape[2], dk, v.shape[3]
    p.scale = 0.0 if scale is None else float(scale)
    p.sliding_window = 0 if sliding_window is None else int(sliding_window)
    vm = mask01(value_mask, "%s: value_mask" % who, (2,))
    p.has_value_mask = vm is not None
    out = np.empty((b, h, tq, v.shape[3]), np.float32)
    check(lib.vkattn_reference_sdpa_decode(
        p, ffi.NULL, ffi.cast("const void *", q.ctypes.data),
        ffi.cast("const void *", k.ctypes.data), ffi.cast("const void *", v.ctypes.data),
        ffi.cast("const uint32_t *", lens.ctypes.data),
        ffi.NULL if vm is None else ffi.cast("const float *", vm.ctypes.data),
        ffi.cast("void *", out.ctypes.data)))
    return out
