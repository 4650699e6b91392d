"""The four attention layers, with Keras's constructor and call arguments.

A layer is created on the device on its first call (or build()), which fixes its
input widths, as Keras builds a layer on its first call; later calls may change
batch and sequence lengths, not widths. Weights are lists of numpy arrays in
Keras's get_weights() order and shapes.

Beyond Keras, every layer takes keyword-only `context=` (default:
vkattn.default_context()) and `seed=` (the Philox dropout seed; None = random),
and every call `seed=` and `offset=` (the dropout stream for that call; by
default the layer's seed and a counter that advances once per training call),
`path=` ("auto", "fused", "unfused": the SDPA implementation) and
`use_causal_mask="bottom_right"` (decoding with a KV cache).
"""
import secrets
import weakref

from . import _specs
from ._arrays import Tensors
from ._lib import ffi, lib
from .context import default_context
from .errors import check, invalid


def _destroy_layer(destroy, handle):
    destroy(handle)


class _Layer:
    _spec_type = None

    def __init__(self, spec, context, seed):
        if context is not None and not hasattr(context, "_ptr"):
            raise invalid("%s: context must be a vkattn.Context; got %r"
                          % (type(self).__name__, context))
        self._spec = spec
        self._context = context
        seed = _specs.seed_of(seed, type(self).__name__)
        self._seed = secrets.randbits(64) if seed is None else seed
        self._step = 0
        self._handle = None
        self._widths = None
        self._finalizer = None

    # -- lifetime

    @property
    def built(self):
        return self._handle is not None

    @property
    def context(self):
        return self._context

    def build(self, query_shape, value_shape, key_shape=None):
        """Creates the layer on the device for these input shapes (only the last dims,
        the widths, are kept). Called by the first call; a second build is an error."""
        who = type(self).__name__
        if self.built:
            raise invalid("%s.build: the layer is already built for widths %s"
                          % (who, self._widths))
        widths = _specs.widths_of(self._spec, tuple(query_shape), tuple(value_shape),
                                  None if key_shape is None else tuple(key_shape))
        if self._context is None:
            self._context = default_context()
        ctx = self._context
        kind = self._spec.kind
        with ctx._lock:
            out = ffi.new("vkattn_%s **" % kind)
            check(getattr(lib, "vkattn_%s_create" % kind)(ctx._ptr(), self._spec.desc(widths),
                                                          out), ctx._handle)
            self._handle = out[0]
            self._widths = widths
            self._finalizer = weakref.finalize(
                self, _destroy_layer, getattr(lib, "vkattn_%s_destroy" % kind), out[0])
            ctx._adopt(self._finalizer)

    def close(self):
        """Frees the device layer now (also done when the layer or its context goes)."""
        if self._finalizer is not None:
            with self._context._lock:
                self._finalizer()

    def _ptr(self, who):
        if not self.built:
            raise invalid("%s.%s: the layer is not built yet: call it, or build(), first"
                          % (type(self).__name__, who))
        if not self._finalizer.alive:
            raise invalid("%s.%s: the layer is closed (or its context is)"
                          % (type(self).__name__, who))
        return self._handle

    # -- weights

    def get_weights(self):
        """The weights as numpy arrays in Keras's order ([] before the layer is built)."""
        if not self.built:
            return []
        with self._context._lock:
            w, read = self._spec.unpacked(self._widths)
            check(getattr(lib, "vkattn_%s_get_weights" % self._spec.kind)(
                self._ptr("get_weights"), w), self._context._handle)
            return read()

    def set_weights(self, weights):
        """Sets the weights from numpy arrays in Keras's order and shapes."""
        who = "%s.set_weights" % type(self).__name__
        handle = self._ptr("set_weights")
        arrays = self._spec.check_weights(self._widths, weights, who)
        with self._context._lock:
            hidden = {}
            if self._spec.hidden_defaults():
                cur, _ = self._spec.unpacked(self._widths)
                check(getattr(lib, "vkattn_%s_get_weights" % self._spec.kind)(handle, cur),
                      self._context._handle)
                hidden = self._spec.hidden_current(cur)
            w = self._spec.pack(self._widths, arrays, hidden)
            check(getattr(lib, "vkattn_%s_set_weights" % self._spec.kind)(handle, w),
                  self._context._handle)

    # -- calls

    def _check_widths(self, who, a):
        # Clearer than the library's element count: widths are fixed at build.
        names = ("query", "value", "key")
        for name, x, built in zip(names, (a.q, a.v, a.k), self._widths):
            if x is not None and x.shape[-1] != built:
                raise invalid("%s: %s has width %d (shape %s); the layer was built for "
                              "%s_width %d on its first call" % (who, name, x.shape[-1],
                                                                 x.shape, name, built))

    def _next_stream(self, training, seed, offset):
        if seed is None:
            seed = self._seed
        if offset is None:
            offset = self._step
            if training and self._spec.dropout > 0:
                self._step += 1  # a fresh dropout mask per training call, as Keras
        return seed, offset

    def _call(self, who, query, value, key, query_mask, value_mask, attention_mask,
              use_causal_mask, training, return_scores, seed, offset, path):
        a = _specs.CallArrays(self._spec, who, query, value, key, query_mask, value_mask,
                              attention_mask)
        if not self.built:
            self.build(a.q.shape, a.v.shape, None if a.k is None else a.k.shape)
        self._check_widths(who, a)
        seed, offset = self._next_stream(training, seed, offset)
        call = _specs.layer_call(a.batch, a.tq, a.tv, use_causal_mask, training, seed, offset,
                                 return_scores, path, who)
        out_shape = a.output_shape(self._spec, self._widths)
        scores_shape = self._spec.scores_shape(a.batch, a.tq, a.tv)
        ctx = self._context
        with ctx._lock, Tensors(ctx) as ts:
            handle = self._ptr("__call__")
            io = ffi.new("vkattn_layer_io *")
            io.query, io.value, io.key = ts.upload(a.q), ts.upload(a.v), ts.upload(a.k)
            io.query_mask, io.value_mask = ts.upload(a.qm), ts.upload(a.vm)
            io.attention_mask = ts.upload(a.am)
            io.output = ts.empty(out_shape)
            if return_scores:
                io.scores = ts.empty(scores_shape)
            check(getattr(lib, "vkattn_%s_run" % self._spec.kind)(handle, call, io),
                  ctx._handle)
            out = ts.download(io.output, out_shape)
            if return_scores:
                return out, ts.download(io.scores, scores_shape)
            return out


class _KerasAttentionCall(_Layer):
    """Keras's Attention-style call: inputs=[query, value(, key)], mask=[qmask, vmask]."""

    def __call__(self, inputs, mask=None, training=False, return_attention_scores=False,
                 use_causal_mask=False, *, attention_mask=None, seed=None, offset=None,
                 path="auto"):
        """Returns the output (B, Tq, value_width), and with return_attention_scores
        also the weights (B, Tq, Tv) after dropout, as Keras does. Masks: nonzero or
        True = may attend; query_mask zeroes output rows. attention_mask (an
        extension) broadcasts to (B, Tq, Tv)."""
        who = type(self).__name__
        query, value, key = _specs.unpack_inputs(inputs, who)
        query_mask, value_mask = _specs.unpack_mask(mask, who)
        return self._call(who, query, value, key, query_mask, value_mask, attention_mask,
                          use_causal_mask, training, return_attention_scores, seed, offset,
                          path)


class Attention(_KerasAttentionCall):
    """keras.layers.Attention (Luong-style): dot or concat scores, no 1/sqrt(d).
    Weights: [scale] if use_scale, then [concat_score_weight] if score_mode="concat";
    scalars of shape (), 1.0 in a new layer."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, *, seed=None,
                 context=None):
        super().__init__(_specs.AttentionSpec(use_scale, score_mode, dropout), context, seed)


class AdditiveAttention(_KerasAttentionCall):
    """keras.layers.AdditiveAttention (Bahdanau-style, no projections).
    Weights: [scale (query_width,)] if use_scale; all ones in a new layer."""

    def __init__(self, use_scale=True, dropout=0.0, *, seed=None, context=None):
        super().__init__(_specs.AdditiveAttentionSpec(use_scale, dropout), context, seed)


class BahdanauAttention(_KerasAttentionCall):
    """Additive attention with learned projections (not a Keras layer):
    S = v . tanh(query Wq + key Wk) + b. A rank-2 query (B, query_width) is one
    decoder state per batch row and gives a (B, value_width) context vector.
    Weights, as Keras Dense layers hold them: [query_kernel (query_width, units),
    key_kernel (key_width, units), score_kernel (units, 1), score_bias (1,)]; a new
    layer has zero kernels, score_kernel ones and bias 0."""

    def __init__(self, units, dropout=0.0, *, seed=None, context=None):
        super().__init__(_specs.BahdanauSpec(units, dropout), context, seed)


class MultiHeadAttention(_Layer):
    """keras.layers.MultiHeadAttention over the sequence axis.
    Weights: [query_kernel (Dq, H, key_dim), query_bias (H, key_dim), key_kernel
    (Dk, H, key_dim), key_bias, value_kernel (Dv, H, value_dim), value_bias
    (H, value_dim), output_kernel (H, value_dim, Dout), output_bias (Dout,)], the
    kernels alone with use_bias=False; zeros in a new layer. output_shape is the
    output width (an int or a 1-tuple; None = query_width). sliding_window (Keras
    3.15): None, or an int >= 1: query i sees only keys j with |i - j| <
    sliding_window, AND-ed with every other mask (docs/SEMANTICS.md)."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, *, sliding_window=None, seed=None, context=None):
        super().__init__(_specs.MultiHeadAttentionSpec(num_heads, key_dim, value_dim, dropout,
                                                       use_bias, output_shape, sliding_window),
                         context, seed)

    def __call__(self, query, value, key=None, query_mask=None, value_mask=None,
                 key_mask=None, attention_mask=None, return_attention_scores=False,
                 training=False, use_causal_mask=False, *, seed=None, offset=None,
                 path="auto"):
        """Returns the output (B, Tq, Dout), and with return_attention_scores also the
        weights (B, H, Tq, Tv) before dropout, as Keras does. Masks: nonzero or True =
        may attend, AND-ed; key_mask joins value_mask as in Keras; attention_mask
        broadcasts to (B, Tq, Tv) or (B, H, Tq, Tv). A query row with no allowed key
        gets zero weights (its output row is output_bias)."""
        if key_mask is not None:
            value_mask = _specs.and_masks(value_mask, key_mask, "MultiHeadAttention: key_mask")
        return self._call("MultiHeadAttention", query, value, key, query_mask, value_mask,
                          attention_mask, use_causal_mask, training, return_attention_scores,
                          seed, offset, path)

