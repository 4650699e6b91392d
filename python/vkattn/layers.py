"""The five attention layers, with Keras's constructor and call arguments.

A layer is created on the device on its first call (or build()), which fixes its
input widths, as Keras builds a layer on its first call; later calls may change
batch and sequence lengths, not widths. Weights are lists of numpy arrays in
Keras's get_weights() order and shapes.

Weights start as Keras initializes them (kernel_initializer= and bias_initializer=,
Keras's names or config dicts; drawn by the library, seeded: docs/PYTHON.md).
Beyond Keras, every layer takes keyword-only `context=` (default:
vkattn.default_context()) and `seed=` (the Philox dropout seed, and the
initializers' when their configs give none; None = random),
and every call `seed=` and `offset=` (the dropout stream for that call; by
default the layer's seed and a counter that advances once per training call),
`path=` ("auto", "fused", "unfused": the SDPA implementation) and
`use_causal_mask="bottom_right"` (decoding with a KV cache).
"""
import errno
import os
import secrets
import weakref

import numpy as np

from . import _cached, _initializers, _specs
from ._arrays import Tensors
from ._lib import RUN_NOW, ffi, lib
from .context import default_context
from .errors import check, invalid
from .tensor import Tensor, check_contexts


def _destroy_layer(destroy, handle):
    destroy(handle)


_NAMES = {"keras": 0, "torch": 1, "llama": 2}  # vkattn_weights_names


def _path_of(path, who):
    try:
        return os.fsencode(path)
    except TypeError:
        raise invalid("%s: path must be a str, bytes or os.PathLike; got %r"
                      % (who, path)) from None


def _must_exist(path, who, what="file"):
    """FileNotFoundError (an OSError, as open() raises) for a path that is not there:
    the library would only say "cannot open" as an InvalidArgumentError. Other files
    (a folder, a FIFO, unreadable) are the library's to refuse, with its messages."""
    try:
        os.stat(path)
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "%s: no such %s" % (who, what),
                                os.fsdecode(path)) from None
    except OSError:
        pass


def _prefix_of(prefix, who):
    """A C string for the prefix (NULL for None); kept alive by the caller's frame."""
    if prefix is None:
        return ffi.NULL
    if not isinstance(prefix, str):
        raise invalid("%s: prefix must be a str or None; got %r" % (who, prefix))
    return ffi.new("char[]", prefix.encode())


class _Layer:
    _spec_type = None

    def __init__(self, spec, context, seed, dtype, initializers=()):
        """initializers: (C desc field, argument name, value, Keras default) of each
        initializer the layer takes."""
        if context is not None and not hasattr(context, "_ptr"):
            raise invalid("%s: context must be a vkattn.Context; got %r"
                          % (type(self).__name__, context))
        self._spec = spec
        self._context = context
        self._dtype = _specs.dtype_of(dtype, type(self).__name__)
        seed = _specs.seed_of(seed, type(self).__name__)
        self._seed = secrets.randbits(64) if seed is None else seed
        # C field -> (code, argument name, Keras default); one seed for them all: the
        # first an initializer's config gives, else the layer's
        self._inits, seeds = {}, []
        for field, arg, value, default in initializers:
            code, s = _initializers.parse(value, "%s: %s" % (type(self).__name__, arg))
            self._inits[field] = (code, arg, default)
            seeds.append(s)
        self._init_seed = next((s for s in seeds if s is not None), self._seed)
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

    @property
    def dtype(self):
        """"float32", "float16" or "bfloat16" (Keras's dtype policy name)."""
        return self._dtype

    # -- Keras's config and shapes

    def get_config(self):
        """The constructor arguments as a dict, as Keras's get_config(), with the
        layer's dropout seed (the one drawn when seed=None, so a layer made from the
        config draws the same dropout masks) and dtype; not the context."""
        config = dict(self._spec.config())
        config.update(seed=self._seed, dtype=self._dtype)
        for code, arg, default in self._inits.values():
            if arg:  # AdditiveAttention's scale has no argument in Keras
                config[arg] = _initializers.config_of(code, self._init_seed, default)
        return config

    @classmethod
    def from_config(cls, config, *, context=None):
        """A new (unbuilt) layer from get_config()'s dict, or Keras 3.15's (every key
        its get_config writes; a DTypePolicy dict for dtype). Keras's "name" and
        "trainable" keys are accepted and ignored; a value vkattn cannot honour (a
        regularizer or constraint, other attention_axes) is refused naming the key,
        as is any unknown key."""
        if not isinstance(config, dict):
            raise invalid("%s.from_config: config must be a dict; got %r"
                          % (cls.__name__, config))
        args = {k: v for k, v in config.items() if k not in ("name", "trainable")}
        try:
            return cls(context=context, **args)
        except TypeError as e:
            raise invalid("%s.from_config: %s" % (cls.__name__, e)) from None

    def _output_shape(self, query_shape, value_shape, key_shape, who):
        """The output shape for these input shapes (dims may be None), as a call gives."""
        shapes = []
        for name, shape in (("query_shape", query_shape), ("value_shape", value_shape),
                            ("key_shape", key_shape)):
            if shape is None and name != "key_shape":
                raise invalid("%s: %s is required" % (who, name))
            if shape is not None:
                try:
                    shape = tuple(shape)
                except TypeError:
                    raise invalid("%s: %s must be a shape (a tuple of dims); got %r"
                                  % (who, name, shape)) from None
                ranks = self._spec.query_ranks if name == "query_shape" else (3,)
                if len(shape) not in ranks or not isinstance(shape[-1], (int, np.integer)):
                    raise invalid("%s: %s %r must have rank %s and a known last dim"
                                  % (who, name, shape, " or ".join(map(str, ranks))))
            shapes.append(shape)
        q, v, k = shapes
        widths = _specs.widths_of(self._spec, q, v, k)
        if self.built and widths != self._widths:
            raise invalid("%s: widths %s; the layer was built for %s"
                          % (who, widths, self._widths))
        return tuple(q[:-1]) + (int(self._spec.out_width(widths)),)

    def build(self, query_shape, value_shape, key_shape=None):
        """Creates the layer on the device for these input shapes (only the last dims,
        the widths, are kept). Called by the first call; a second build is an error."""
        who = type(self).__name__
        if self.built:
            raise invalid("%s.build: the layer is already built for widths %s"
                          % (who, self._widths))
        widths = _specs.widths_of(self._spec, tuple(query_shape), tuple(value_shape),
                                  None if key_shape is None else tuple(key_shape))
        self._spec.check_widths(widths, who, key_shape is not None)
        if self._context is None:
            self._context = default_context()
        ctx = self._context
        kind = self._spec.kind
        desc = self._desc(widths)
        with ctx._lock:
            out = ffi.new("vkattn_%s **" % kind)
            check(getattr(lib, "vkattn_%s_create" % kind)(ctx._ptr(), desc, out), ctx._handle)
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
        """The weights as numpy arrays in Keras's order ([] before the layer is built):
        float32, or for a float16 layer float16, for a bfloat16 layer bfloat16 bit
        patterns in uint16 arrays (vkattn.bfloat16.to_float32 reads them): what it
        keeps, exactly (Bahdanau's score_bias, kept in f32, stays float32)."""
        if not self.built:
            return []
        with self._context._lock:
            w, read = self._spec.unpacked(self._widths)
            check(getattr(lib, "vkattn_%s_get_weights" % self._spec.kind)(
                self._ptr("get_weights"), w), self._context._handle)
            arrays = read()
        if self._dtype != "float32":  # exact: the layer holds values of its dtype
            layout = self._spec.layout(self._widths)
            arrays = [a if f in self._spec.f32_weights else _specs.host_result(a, self._dtype)
                      for (f, _, _), a in zip(layout, arrays)]
        return arrays

    def set_weights(self, weights):
        """Sets the weights from numpy arrays in Keras's order and shapes (a bfloat16
        layer's uint16 arrays are bit patterns, as get_weights returns them)."""
        who = "%s.set_weights" % type(self).__name__
        handle = self._ptr("set_weights")
        arrays = self._spec.check_weights(self._widths, weights, who, self._dtype)
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

    # -- safetensors files (vkattn/weights.h)

    def save_weights(self, path, *, prefix=None):
        """Writes the weights to a safetensors file (F32) under their Keras names
        ("query/kernel", ...; docs/LAYERS.md), in Keras shapes, each name after
        prefix; load_weights reads it back bit for bit."""
        who = "%s.save_weights" % type(self).__name__
        handle = self._ptr("save_weights")
        path, prefix = _path_of(path, who), _prefix_of(prefix, who)
        _must_exist(os.path.dirname(path) or b".", who, "folder")
        kind = self._spec.kind
        with self._context._lock:
            w, keep = self._spec.unpacked(self._widths)
            check(getattr(lib, "vkattn_%s_get_weights" % kind)(handle, w), self._context._handle)
            check(getattr(lib, "vkattn_%s_weights_save" % kind)(path, self._desc(), w, prefix))
            del keep

    def load_weights(self, path, *, names="keras", prefix=None):
        """Sets the weights from a safetensors file (F32, F16 or BF16 tensors). names:
        "keras" (Keras variable names and shapes, every layer), "torch" (a PyTorch
        nn.MultiheadAttention state dict: MultiHeadAttention) or "llama" (q_proj,
        k_proj, v_proj, o_proj Linear weights: GroupedQueryAttention); prefix picks one
        layer of a bigger model ("model.layers.0.self_attn."). The layer must be built
        (its widths fix the shapes expected)."""
        who = "%s.load_weights" % type(self).__name__
        handle = self._ptr("load_weights")
        if names not in _NAMES:
            raise invalid("%s: names must be one of %s; got %r"
                          % (who, ", ".join('"%s"' % n for n in _NAMES), names))
        path, prefix = _path_of(path, who), _prefix_of(prefix, who)
        _must_exist(path, who)
        kind = self._spec.kind
        load = ffi.new("vkattn_weights_load_desc *", {"names": _NAMES[names]})
        load.prefix = prefix
        file = ffi.new("vkattn_weights_file **")
        check(lib.vkattn_weights_file_open(path, file))
        w = ffi.new(self._spec.weights_type + " *")
        # GroupedQueryAttention's weights are MultiHeadAttention's struct (its free is
        # a header inline, vkattn/gqa_host.h); Attention's hold no arrays
        free = getattr(lib, "vkattn_%s_weights_free" % ("mha" if kind == "gqa" else kind),
                       None)
        try:
            check(getattr(lib, "vkattn_%s_weights_load" % kind)(file[0], self._desc(), load, w))
            with self._context._lock:
                check(getattr(lib, "vkattn_%s_set_weights" % kind)(handle, w),
                      self._context._handle)
        finally:
            if free is not None:
                free(w)  # NULL-safe on a zeroed struct
            lib.vkattn_weights_file_close(file[0])

    def _desc(self, widths=None):
        """The C desc of this layer (for widths, default the built ones)."""
        desc = self._spec.desc(widths or self._widths)
        desc.dtype = _specs.dtype_code(self._dtype)
        for field, (code, _, _) in self._inits.items():
            setattr(desc, field, code)
        if self._inits:
            desc.initializer_seed = self._init_seed
        return desc

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

    def _prepare_call(self, who, query, value, key, masks, use_causal_mask, training,
                      return_scores, seed, offset, path, backward, positions=None):
        """(arrays, C call) of one call; builds the layer on its first call. masks: the
        call's mask arguments by name (query_mask, value_mask, attention_mask, and the
        multi-head layers' key_mask and key_padding_mask)."""
        query, value, key = (_specs.host_values(x, self._dtype) for x in (query, value, key))
        a = _specs.CallArrays(self._spec, who, query, value, key, **masks)
        a.positions(self._spec, who, **(positions or {}))
        if not self.built:
            self._spec.check_widths(a.widths, who, a.k is not None)
            self.build(a.q.shape, a.v.shape, None if a.k is None else a.k.shape)
        self._check_widths(who, a)
        check_contexts(self._context, who, (("query", a.q), ("value", a.v), ("key", a.k)),
                       self._dtype)
        seed, offset = self._next_stream(training, seed, offset)
        call = _specs.layer_call(a.batch, a.tq, a.tv, use_causal_mask, training, seed, offset,
                                 return_scores, path, who)
        call.keep_for_backward = backward
        return a, call

    def _io(self, ts, a, dt):
        """The device io of one call: inputs in dtype dt (masks stay f32), the output."""
        io = ffi.new("vkattn_layer_io *")
        io.query, io.value = ts.upload(a.q, dt), ts.upload(a.v, dt)
        io.key = ts.upload(a.k, dt)
        io.query_mask, io.value_mask = ts.upload(a.qm), ts.upload(a.vm)
        io.attention_mask = ts.upload(a.am)
        io.query_positions, io.key_positions = ts.upload(a.qp), ts.upload(a.kp)
        io.output = ts.empty(a.output_shape(self._spec, self._widths), dt, result=True)
        return io

    def _call(self, who, query, value, key, masks, use_causal_mask, training, return_scores,
              seed, offset, path, positions=None):
        a, call = self._prepare_call(who, query, value, key, masks, use_causal_mask, training,
                                     return_scores, seed, offset, path, False, positions)
        out_shape = a.output_shape(self._spec, self._widths)
        scores_shape = self._spec.scores_shape(a.batch, a.tq, a.tv)
        ctx = self._context
        dt = _specs.dtype_code(self._dtype)  # inputs, output and scores; masks stay f32
        # a Tensor query: the results stay on the device, returned as Tensors
        with ctx._lock, Tensors(ctx, keep=isinstance(a.q, Tensor)) as ts:
            handle = self._ptr("__call__")
            io = self._io(ts, a, dt)
            if return_scores:
                io.scores = ts.empty(scores_shape, dt, result=True)
            check(getattr(lib, "vkattn_%s_record" % self._spec.kind)(handle, RUN_NOW, call, io),
                  ctx._handle)
            result = [ts.download(io.output, out_shape)]
            if return_scores:
                result.append(ts.download(io.scores, scores_shape))
        result = [r if isinstance(r, Tensor) else _specs.host_result(r, self._dtype)
                  for r in result]
        return tuple(result) if return_scores else result[0]

    def _gradients(self, who, query, value, key, masks, use_causal_mask, training, seed,
                   offset, path, grad_output, positions=None):
        """The forward (kept for backward) then the backward on the device."""
        a, call = self._prepare_call(who, query, value, key, masks, use_causal_mask, training,
                                     False, seed, offset, path, True, positions)
        out_shape = a.output_shape(self._spec, self._widths)
        g = _specs.f32(_specs.host_values(grad_output, self._dtype), "%s: grad_output" % who)
        if g is None or g.shape != out_shape:
            raise invalid("%s: grad_output must have the output's shape %s; got %s"
                          % (who, out_shape, None if g is None else g.shape))
        layout = self._spec.layout(self._widths)
        kind, ctx = self._spec.kind, self._context
        dt = _specs.dtype_code(self._dtype)  # io, grad_output and the gradients
        with ctx._lock, Tensors(ctx) as ts:
            handle = self._ptr("gradients")
            io = self._io(ts, a, dt)
            check(getattr(lib, "vkattn_%s_record" % kind)(handle, RUN_NOW, call, io), ctx._handle)
            grads = ffi.new("vkattn_layer_grads *")
            grads.grad_output = ts.upload(g, dt)
            inputs = [("grad_query", a.q), ("grad_value", a.v)]
            if a.k is not None:
                inputs.append(("grad_key", a.k))
            for field, x in inputs:
                setattr(grads, field, ts.empty(x.shape, dt))
            grad_w = ffi.new("vkattn_%s_weight_tensors *" % kind)
            for field, shape, _ in layout:
                setattr(grad_w, field, ts.empty(shape, dt))
            backward = getattr(lib, "vkattn_%s_backward_record" % kind)
            check(backward(handle, RUN_NOW, call, io, grads, grad_w), ctx._handle)
            result = ([ts.download(getattr(grads, f), x.shape) for f, x in inputs],
                      [ts.download(getattr(grad_w, f), shape) for f, shape, _ in layout])
        result = tuple([_specs.host_result(r, self._dtype) for r in part] for part in result)
        return result


class _KerasAttentionCall(_Layer):
    """Keras's Attention-style call: inputs=[query, value(, key)], mask=[qmask, vmask]."""

    def __call__(self, inputs, mask=None, training=False, return_attention_scores=False,
                 use_causal_mask=False, *, attention_mask=None, seed=None, offset=None,
                 path="auto"):
        """Returns the output (B, Tq, value_width), and with return_attention_scores
        also the weights (B, Tq, Tv) after dropout, as Keras does. Masks: 0/1 or
        booleans, 1 or True = may attend (any other value is refused); query_mask
        (B, Tq) zeroes output rows, value_mask is (B, Tv). attention_mask (an
        extension) broadcasts to (B, Tq, Tv)."""
        who = type(self).__name__
        query, value, key = _specs.unpack_inputs(inputs, who)
        query_mask, value_mask = _specs.unpack_mask(mask, who)
        masks = dict(query_mask=query_mask, value_mask=value_mask, attention_mask=attention_mask)
        return self._call(who, query, value, key, masks, use_causal_mask, training,
                          return_attention_scores, seed, offset, path)

    def gradients(self, inputs, mask=None, training=False, use_causal_mask=False, *,
                  grad_output, attention_mask=None, seed=None, offset=None, path="auto"):
        """The gradients of a call (arguments as __call__'s) given grad_output = dL/d(output):
        ([dL/d(query), dL/d(value)(, dL/d(key) when key is given)], the weight gradients
        in get_weights() order), as numpy arrays of the layer's dtype. Runs the forward,
        then the backward (docs/TRAINING.md); with training=True both draw the same
        dropout mask. A float16 layer takes float16 inputs and grad_output and returns
        float16 gradients (fp32 accumulation, each rounded once); a bfloat16 layer
        the same in bfloat16 (uint16 bit patterns)."""
        who = "%s.gradients" % type(self).__name__
        query, value, key = _specs.unpack_inputs(inputs, who)
        query_mask, value_mask = _specs.unpack_mask(mask, who)
        masks = dict(query_mask=query_mask, value_mask=value_mask, attention_mask=attention_mask)
        return self._gradients(who, query, value, key, masks, use_causal_mask, training, seed,
                               offset, path, grad_output)

    def compute_output_shape(self, input_shape):
        """Keras's: input_shape = [query_shape, value_shape(, key_shape)] (dims may be
        None but the last) -> the output's shape, query_shape[:-1] + (value_width,)."""
        who = "%s.compute_output_shape" % type(self).__name__
        q, v, k = _specs.unpack_inputs(input_shape, who)
        return self._output_shape(q, v, k, who)


class Attention(_KerasAttentionCall):
    """keras.layers.Attention (Luong-style): dot or concat scores, no 1/sqrt(d).
    Weights: [scale] if use_scale, then [concat_score_weight] if score_mode="concat";
    scalars of shape (), 1.0 in a new layer."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, *, seed=None,
                 dtype=None, context=None):
        super().__init__(_specs.AttentionSpec(use_scale, score_mode, dropout), context, seed,
                         dtype)


class AdditiveAttention(_KerasAttentionCall):
    """keras.layers.AdditiveAttention (Bahdanau-style, no projections).
    Weights: [scale (query_width,)] if use_scale; glorot_uniform in a new layer, as
    Keras 3 (seeded by seed=)."""

    def __init__(self, use_scale=True, dropout=0.0, *, seed=None, dtype=None, context=None):
        super().__init__(_specs.AdditiveAttentionSpec(use_scale, dropout), context, seed,
                         dtype, [("scale_initializer", None, None, "glorot_uniform")])


class BahdanauAttention(_KerasAttentionCall):
    """Additive attention with learned projections (not a Keras layer):
    S = v . tanh(query Wq + key Wk) + b. A rank-2 query (B, query_width) is one
    decoder state per batch row and gives a (B, value_width) context vector.
    Weights, as Keras Dense layers hold them: [query_kernel (query_width, units),
    key_kernel (key_width, units), score_kernel (units, 1), score_bias (1,)]; a new
    layer's kernels are drawn by kernel_initializer (glorot_uniform, as Keras Dense
    kernels), score_bias by bias_initializer (zeros)."""

    def __init__(self, units, dropout=0.0, *, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", seed=None, dtype=None, context=None):
        super().__init__(_specs.BahdanauSpec(units, dropout), context, seed, dtype,
                         _kernel_bias(kernel_initializer, bias_initializer))


def _kernel_bias(kernel_initializer, bias_initializer):
    """The initializers of a layer with kernels and biases, as _Layer takes them."""
    return [("kernel_initializer", "kernel_initializer", kernel_initializer, "glorot_uniform"),
            ("bias_initializer", "bias_initializer", bias_initializer, "zeros")]


# The sequence axis of a (B, T, D) input: Keras's attention_axes for it (None means it)
_SEQUENCE_AXES = (None, 1, -2, (1,), (-2,), [1], [-2])


def _keras_only(who, attention_axes, flash_attention, *regularizers_constraints):
    """Keras arguments vkattn takes for its configs: accepted where they ask for what
    vkattn does, refused naming the argument where they ask for more."""
    if attention_axes not in _SEQUENCE_AXES:
        raise invalid("%s: attention_axes=%r: vkattn attends over the sequence axis of "
                      "(B, T, D) inputs only (None, 1 or (1,))" % (who, attention_axes))
    if flash_attention not in (None, True, False):
        raise invalid("%s: flash_attention must be None, True or False; got %r"
                      % (who, flash_attention))
    names = ("kernel_regularizer", "bias_regularizer", "activity_regularizer",
             "kernel_constraint", "bias_constraint")
    for name, value in zip(names, regularizers_constraints):
        if value is not None:
            raise invalid("%s: %s=%r: vkattn has no regularizers or constraints (train with "
                          "your own loss terms); only None is accepted" % (who, name, value))


class _MultiHeadCall(_Layer):
    """Keras's MultiHeadAttention-style call: query, value, key=None and named masks."""

    def __call__(self, query, value, key=None, query_mask=None, value_mask=None,
                 key_mask=None, attention_mask=None, return_attention_scores=False,
                 training=False, use_causal_mask=False, *, key_padding_mask=None, seed=None,
                 offset=None, path="auto", cache=None, query_positions=None,
                 key_positions=None):
        """Returns the output (B, Tq, Dout), and with return_attention_scores also the
        weights (B, heads, Tq, Tv) before dropout, as Keras does. Masks: 1 or True = may
        attend (Keras's polarity), 0/1 or booleans only, AND-ed; key_mask joins
        value_mask as in Keras; attention_mask broadcasts to (B, Tq, Tv) or (B, heads,
        Tq, Tv). key_padding_mask (B, Tv) is PyTorch's nn.MultiheadAttention argument,
        with PyTorch's polarity: True = padding, ignored. A query row with no allowed key
        gets zero weights (its output row is output_bias). cache: a vkattn.KVCache made
        for this layer: the call appends the new tokens' keys and values and attends over
        everything cached (generation; docs/PYTHON.md). query_positions (B, Tq) and
        key_positions (B, Tv), with rope only: the non-negative integer positions
        (Hugging Face's position_ids) the rotary embedding turns queries and keys by;
        None = query t at t, key s at s (with a cache: each new token at its
        sequence's cache length)."""
        who = type(self).__name__
        positions = dict(query_positions=query_positions, key_positions=key_positions)
        if cache is not None:
            if query_positions is not None or key_positions is not None:
                raise invalid("%s: query_positions and key_positions do not apply with "
                              "cache=: each new token is at its sequence's cache length"
                              % who)
            return _cached.call(self, who, query, value, key, cache, value_mask=value_mask,
                                use_causal_mask=use_causal_mask, training=training,
                                others=dict(query_mask=query_mask, key_mask=key_mask,
                                            attention_mask=attention_mask,
                                            key_padding_mask=key_padding_mask,
                                            return_attention_scores=return_attention_scores))
        masks = dict(query_mask=query_mask, value_mask=value_mask, key_mask=key_mask,
                     key_padding_mask=key_padding_mask, attention_mask=attention_mask)
        return self._call(who, query, value, key, masks, use_causal_mask, training,
                          return_attention_scores, seed, offset, path, positions)

    def gradients(self, query, value, key=None, query_mask=None, value_mask=None,
                  key_mask=None, attention_mask=None, training=False, use_causal_mask=False,
                  *, grad_output, key_padding_mask=None, seed=None, offset=None,
                  path="auto", query_positions=None, key_positions=None):
        """The gradients of a call (arguments as __call__'s) given grad_output = dL/d(output):
        ([dL/d(query), dL/d(value)(, dL/d(key) when key is given)], the weight gradients
        in get_weights() order), as numpy arrays of the layer's dtype. With key omitted,
        dL/d(value) includes the key path. A float16 layer: float16 gradients (fp32
        accumulation); a bfloat16 layer: bfloat16 ones (uint16 bit patterns)."""
        who = "%s.gradients" % type(self).__name__
        masks = dict(query_mask=query_mask, value_mask=value_mask, key_mask=key_mask,
                     key_padding_mask=key_padding_mask, attention_mask=attention_mask)
        positions = dict(query_positions=query_positions, key_positions=key_positions)
        return self._gradients(who, query, value, key, masks, use_causal_mask, training, seed,
                               offset, path, grad_output, positions)

    def compute_output_shape(self, query_shape, value_shape, key_shape=None):
        """Keras's: the output's shape, query_shape[:-1] + (output width,) (dims may be
        None but the last)."""
        return self._output_shape(query_shape, value_shape, key_shape,
                                  "%s.compute_output_shape" % type(self).__name__)


class MultiHeadAttention(_MultiHeadCall):
    """keras.layers.MultiHeadAttention over the sequence axis.
    Weights: [query_kernel (Dq, H, key_dim), query_bias (H, key_dim), key_kernel
    (Dk, H, key_dim), key_bias, value_kernel (Dv, H, value_dim), value_bias
    (H, value_dim), output_kernel (H, value_dim, Dout), output_bias (Dout,)], the
    kernels alone with use_bias=False; a new layer's kernels are drawn by
    kernel_initializer (glorot_uniform), its biases by bias_initializer (zeros), as
    Keras's (the values are the library's Philox stream's). output_shape is the
    output width (an int or a 1-tuple; None = query_width). sliding_window (Keras
    3.15): None, or an int >= 1: query i sees only keys j with |i - j| <
    sliding_window, AND-ed with every other mask (docs/SEMANTICS.md). use_gate
    (Keras 3.14): each head's context is multiplied by sigmoid(query @ gate_kernel +
    gate_bias) before the output projection; gate_kernel (Dq, H, value_dim) and
    gate_bias (H, value_dim) come after key_bias, before value_kernel, as in Keras.
    Today's open models (keyword-only, not Keras's; docs/PYTHON.md): qk_norm (None, an
    epsilon or {"epsilon": 1e-6}: RMS-normalized projected queries and keys, weights
    query_norm and key_norm (key_dim,)), rope (None or {"max_wavelength": 10000,
    "scaling_factor": 1, "rotary_dim": None, "layout": "half" | "interleaved"}: rotary
    embeddings, turned by the call's query_positions / key_positions), softcap (None
    or a number > 0: scores become softcap * tanh(scores / softcap)), use_sinks (a
    learned logit per head in every softmax denominator, weight sinks (H,)); the new
    weights come after output_bias, in that order."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, sliding_window=None,
                 flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, *, qk_norm=None, rope=None, softcap=None,
                 use_sinks=False, dtype=None, context=None):
        who = type(self).__name__
        _keras_only(who, attention_axes, flash_attention, kernel_regularizer,
                    bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        super().__init__(_specs.MultiHeadAttentionSpec(num_heads, key_dim, value_dim, dropout,
                                                       use_bias, output_shape, sliding_window,
                                                       use_gate,
                                                       (qk_norm, rope, softcap, use_sinks)),
                         context, seed, dtype, _kernel_bias(kernel_initializer,
                                                            bias_initializer))


class GroupedQueryAttention(_MultiHeadCall):
    """keras.layers.GroupQueryAttention (GroupedQueryAttention): num_query_heads query
    heads share num_key_value_heads key/value heads, each of head_dim; query head n
    reads key/value head n // (num_query_heads // num_key_value_heads). Scale
    1/sqrt(head_dim); the output has the query's width. Weights: [query_kernel
    (Dq, Nq, h), query_bias (Nq, h), key_kernel (Dk, Nkv, h), key_bias (Nkv, h),
    value_kernel (Dv, Nkv, h), value_bias (Nkv, h), output_kernel (Nq, h, Dq),
    output_bias (Dq,)], the kernels alone with use_bias=False; a new layer's weights
    start as MultiHeadAttention's (kernel_initializer, bias_initializer).
    query_mask zeroes the weights of masked query rows, as MultiHeadAttention's does;
    scores are (B, Nq, Tq, Tv) before dropout; sliding_window as MultiHeadAttention's. use_gate: as
    MultiHeadAttention's, gate_kernel (Dq, Nq, h) and gate_bias (Nq, h) after key_bias.
    qk_norm, rope, softcap, use_sinks as MultiHeadAttention's: query_norm and key_norm
    (head_dim,), sinks (num_query_heads,)."""

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None, *,
                 qk_norm=None, rope=None, softcap=None, use_sinks=False, dtype=None,
                 context=None):
        who = type(self).__name__
        _keras_only(who, None, flash_attention, kernel_regularizer, bias_regularizer,
                    activity_regularizer, kernel_constraint, bias_constraint)
        super().__init__(_specs.GroupedQueryAttentionSpec(
            head_dim, num_query_heads, num_key_value_heads, dropout, use_bias, sliding_window,
            who, use_gate, (qk_norm, rope, softcap, use_sinks)), context, seed, dtype,
            _kernel_bias(kernel_initializer, bias_initializer))


# Keras exports the class as keras.layers.GroupQueryAttention: the same class.
GroupQueryAttention = GroupedQueryAttention
