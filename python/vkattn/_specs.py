"""What each layer is, independent of where it runs: its C desc, its weights in
Keras order and how they map onto the C weights struct, its output shapes, and
one layer call's options. Shared by the GPU layers (layers.py) and the CPU
references (reference.py), so both read the same arguments the same way.

The weights (names, order, shapes, which exist) are the library's table
(src/shape/layer_weights.h), generated into _weight_table.py: a spec only says
which desc options its config turns on and what width each axis is.
"""
import numbers

import numpy as np

from . import _open_model, bfloat16
from ._lib import ffi
from ._weight_table import TABLES
from .errors import invalid

_CAUSAL = {False: 0, None: 0, True: 1, "none": 0, "top_left": 1, "bottom_right": 2}
_PATHS = {"auto": 0, "fused": 1, "unfused": 2}


# Constructor arguments are checked here, when the layer is made, as Keras
# checks them: the library would only see them at the first call (build).

def _rate(dropout, who):
    """A dropout rate in [0, 1], the library's range (NaN, inf, bools and strings refused)."""
    if (isinstance(dropout, numbers.Real) and not isinstance(dropout, (bool, np.bool_))
            and 0.0 <= float(dropout) <= 1.0):  # NaN fails the comparison
        return float(dropout)
    raise invalid("%s: dropout must be a number in [0, 1]; got %r" % (who, dropout))


def _flag(value, name, who):
    """A boolean argument: True/False (numpy's too) or 0/1, not a string or None."""
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, (int, np.integer))
                                               and value in (0, 1)):
        return bool(value)
    raise invalid("%s: %s must be True or False; got %r" % (who, name, value))


def seed_of(seed, who):
    """A layer's dropout seed: None (the caller draws one) or an int in [0, 2**64)."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < 2**64:
        raise invalid("%s: seed must be None or an int in [0, 2**64); got %r" % (who, seed))
    return int(seed)


def _positive(value, name, who):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise invalid("%s: %s must be an int >= 1; got %r" % (who, name, value))
    return int(value)


def _window(value, who, limit):
    """Keras's sliding_window: None, or a band of |i - j| < value keys (an int >= 1)."""
    if value is None:
        return None
    value = _positive(value, "sliding_window", who)
    if value >= limit:
        raise invalid("%s: sliding_window must be < %d; got %r" % (who, limit, value))
    return value


_DTYPES = {"float32": 0, "float16": 1, "bfloat16": 3}  # vkattn_dtype codes


def dtype_of(dtype, who):
    """A layer's dtype: None or "float32", "float16" or "bfloat16" (numpy dtypes, and
    Keras's serialized DTypePolicy dict too). As Keras's policy of that name: inputs,
    weights, activations and outputs rounded to it, fp32 sums."""
    if dtype is None:
        return "float32"
    if isinstance(dtype, dict):  # Keras 3's serialized DTypePolicy in a get_config()
        dtype = (dtype.get("config") or {}).get("name", dtype)
    try:
        name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    except TypeError:
        name = None
    if name not in _DTYPES:
        raise invalid("%s: dtype must be \"float32\", \"float16\" or \"bfloat16\"; got %r"
                      % (who, dtype))
    return name


def dtype_code(name):
    return _DTYPES[name]


def host_values(x, dtype):
    """A numpy input of a layer of dtype, as values: a bfloat16 layer reads a uint16
    array as bit patterns (as a "bfloat16" vkattn.Tensor does; numpy has no bfloat16).
    Anything else is returned as it is."""
    if dtype == "bfloat16" and isinstance(x, np.ndarray) and x.dtype == np.uint16:
        return bfloat16.to_float32(x)
    return x


def host_result(a, dtype):
    """A float32 result of a layer of dtype as Keras's policy returns it: float16, or
    bfloat16 bit patterns (uint16); exact, since the device tensor held such values."""
    if dtype == "float16":
        return a.astype(np.float16)
    if dtype == "bfloat16":
        return bfloat16.from_float32(a)
    return a


def _same_key_width(widths, who, key_given, how):
    """Attention and AdditiveAttention: the key's width must be the query's."""
    if widths[2] != widths[0]:
        raise invalid("%s: %s has width %d; it must be query's, %d: the layer %s query and "
                      "key features directly" % (who, "key" if key_given else
                                                 "value (the key, when none is given)",
                                                 widths[2], widths[0], how))


class Spec:
    """Base: subclasses set the names and fill desc(), options() and axes()."""

    kind = ""            # C prefix: vkattn_<kind>_create ...
    layer = ""           # Keras class name: its weights in _weight_table.TABLES
    desc_type = ""
    weights_type = ""
    query_ranks = (3,)
    multi_head = False
    scales = ()          # weights the references' weights=None stand-ins set to ones
    open_model = None    # the multi-head layers' _open_model.OpenModel

    @property
    def f32_weights(self):
        """Weights a float16 layer keeps in f32 (C headers, "Half precision")."""
        return tuple(w.member for w in TABLES[self.layer] if "f32" in w.device)

    def desc(self, widths):
        """The C desc for widths = (query_width, value_width, key_width)."""
        raise NotImplementedError

    def config(self):
        """The constructor arguments, Keras's get_config() names."""
        raise NotImplementedError

    def options(self):
        """The desc options this config turns on: the table's `needs` words."""
        return ()

    def axes(self, widths):
        """{table axis: width} for widths = (query_width, value_width, key_width)."""
        return {"query_width": widths[0], "value_width": widths[1], "key_width": widths[2]}

    def keras_shape(self, weight, dims):
        """The shape Python shows of a weight whose table dims are dims."""
        return dims

    def weights(self):
        """The table's weights this config has, in Keras's get_weights order."""
        options = set(self.options())
        return [w for w in TABLES[self.layer] if set(w.needs) <= options]

    def layout(self, widths):
        """[(C field, Keras shape, scalar?)] in Keras's get_weights order; the shapes
        are None when widths is."""
        axes = None if widths is None else self.axes(widths)
        return [(w.member, None if axes is None else
                 self.keras_shape(w, tuple(axes[a] for a in w.axes)), w.rank == 0)
                for w in self.weights()]

    def hidden_defaults(self):
        """C struct scalars Keras does not list for this config, with new-layer values
        (1.0 for those the library starts as ones)."""
        listed = self.weights()
        return {w.member: 1.0 if "ones" in w.device else 0.0 for w in TABLES[self.layer]
                if w.rank == 0 and w not in listed}

    def check_widths(self, widths, who, key_given):
        """Widths the layer cannot take together, named as the arguments (the library
        would name its desc fields)."""

    def defaults(self, widths):
        """The references' weights=None stand-ins, Keras order (zeros; ones for the
        scales and for what the library starts as ones): not a new layer's, which the
        library draws (Keras's initializers)."""
        return [(np.ones if "ones" in w.device or w.member in self.scales else np.zeros)(
            shape, np.float32) for w, (_, shape, _) in zip(self.weights(), self.layout(widths))]

    def out_width(self, widths):
        return widths[1]

    def scores_shape(self, b, tq, tv):
        return (b, tq, tv)

    # -- weights <-> C struct

    def check_weights(self, widths, arrays, who, dtype="float32"):
        """arrays as float32, in the layout's shapes; a bfloat16 layer's uint16 arrays
        are bit patterns (host_values)."""
        layout = self.layout(widths)
        if arrays is None or isinstance(arrays, (str, bytes)) or not hasattr(arrays, "__len__"):
            raise invalid("%s: weights must be a list of %d arrays" % (who, len(layout)))
        if len(arrays) != len(layout):
            raise invalid("%s: expected %d weights (%s); got %d"
                          % (who, len(layout), ", ".join(f for f, _, _ in layout), len(arrays)))
        out = []
        for i, ((field, shape, _), a) in enumerate(zip(layout, arrays)):
            try:
                a = np.asarray(host_values(a, dtype), dtype=np.float32, order="C")
            except (TypeError, ValueError) as e:
                raise invalid("%s: weight %d (%s) is not numeric: %s" % (who, i, field, e)) from e
            if a.shape != tuple(shape):
                raise invalid("%s: weight %d (%s) has shape %s; expected %s"
                              % (who, i, field, a.shape, tuple(shape)))
            out.append(a)
        return out

    def pack(self, widths, arrays, hidden):
        """A C weights struct pointing into arrays (checked); keep arrays alive."""
        w = ffi.new(self.weights_type + " *")
        for (field, _, scalar), a in zip(self.layout(widths), arrays):
            if scalar:
                setattr(w, field, float(a.reshape(-1)[0]))
            else:
                setattr(w, field, ffi.cast("float *", a.ctypes.data))
        for field, value in hidden.items():
            setattr(w, field, value)
        return w

    def unpacked(self, widths):
        """(struct, read) for get_weights: the C call fills struct, read() gives the list."""
        w = ffi.new(self.weights_type + " *")
        layout = self.layout(widths)
        arrays = [np.zeros(shape, np.float32) for _, shape, _ in layout]
        for (field, _, scalar), a in zip(layout, arrays):
            if not scalar:
                setattr(w, field, ffi.cast("float *", a.ctypes.data))

        def read():
            for (field, shape, scalar), a in zip(layout, arrays):
                if scalar:
                    a[...] = np.float32(getattr(w, field))
            return arrays

        return w, read

    def hidden_current(self, w):
        return {f: getattr(w, f) for f in self.hidden_defaults()}


class AttentionSpec(Spec):
    kind, desc_type, weights_type = "attention", "vkattn_attention_desc", "vkattn_attention_weights"
    layer = "Attention"

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0):
        if score_mode not in ("dot", "concat"):
            raise invalid("Attention: score_mode must be \"dot\" or \"concat\"; got %r"
                          % (score_mode,))
        self.use_scale = _flag(use_scale, "use_scale", "Attention")
        self.score_mode = score_mode
        self.dropout = _rate(dropout, "Attention")

    def config(self):
        return {"use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout}

    def desc(self, widths):
        return ffi.new("vkattn_attention_desc *", {
            "query_width": widths[0], "value_width": widths[1], "key_width": widths[2],
            "use_scale": self.use_scale, "score_mode": int(self.score_mode == "concat"),
            "dropout": self.dropout})

    def check_widths(self, widths, who, key_given):
        _same_key_width(widths, who, key_given, "compares")

    def options(self):
        return ("scale",) * self.use_scale + ("concat",) * (self.score_mode == "concat")


class AdditiveAttentionSpec(Spec):
    kind, layer = "additive_attention", "AdditiveAttention"
    desc_type, weights_type = "vkattn_additive_attention_desc", "vkattn_additive_attention_weights"

    def __init__(self, use_scale=True, dropout=0.0):
        self.use_scale = _flag(use_scale, "use_scale", "AdditiveAttention")
        self.dropout = _rate(dropout, "AdditiveAttention")

    def config(self):
        return {"use_scale": self.use_scale, "dropout": self.dropout}

    def desc(self, widths):
        return ffi.new("vkattn_additive_attention_desc *", {
            "query_width": widths[0], "value_width": widths[1], "key_width": widths[2],
            "no_scale": not self.use_scale, "dropout": self.dropout})

    scales = ("scale",)

    def check_widths(self, widths, who, key_given):
        _same_key_width(widths, who, key_given, "adds")

    def options(self):
        return ("scale",) * self.use_scale


class BahdanauSpec(Spec):
    kind, desc_type, weights_type = "bahdanau", "vkattn_bahdanau_desc", "vkattn_bahdanau_weights"
    layer = "BahdanauAttention"
    query_ranks = (2, 3)
    scales = ("score_kernel",)

    def __init__(self, units, dropout=0.0):
        self.units = _positive(units, "units", "BahdanauAttention")
        self.dropout = _rate(dropout, "BahdanauAttention")

    def config(self):
        return {"units": self.units, "dropout": self.dropout}

    def desc(self, widths):
        return ffi.new("vkattn_bahdanau_desc *", {
            "query_width": widths[0], "value_width": widths[1], "key_width": widths[2],
            "units": self.units, "dropout": self.dropout})

    def axes(self, widths):
        return dict(super().axes(widths), units=self.units)

    def keras_shape(self, weight, dims):
        """As Keras Dense layers hold them: the score is a Dense(1), its kernel (units, 1)
        and its bias (1,) (the library's (units,) and scalar)."""
        if weight.rank == 1 and weight.fans == "in1":
            return dims + (1,)
        return dims or (1,)


class _OpenModelSpec(Spec):
    """The multi-head layers: Keras's weights, then the open-model ones
    (_open_model.py): query_norm, key_norm (head width,) and sinks (heads,)."""

    multi_head = True

    def _open(self, open_model, head_width, head_name, who):
        self.open_model = _open_model.OpenModel(*open_model, head_width, head_name, who, _flag)

    def config(self):
        config = self._config()
        config.update(self.open_model.config())
        return config

    def desc(self, widths):
        desc = self._desc(widths)
        self.open_model.fill(desc)
        return desc

    def options(self):
        return (("bias",) * self.use_bias + ("gate",) * self.use_gate
                + self.open_model.options())


class MultiHeadAttentionSpec(_OpenModelSpec):
    kind, desc_type, weights_type = "mha", "vkattn_mha_desc", "vkattn_mha_weights"
    layer = "MultiHeadAttention"

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, sliding_window=None, use_gate=False,
                 open_model=(None, None, None, False)):
        """open_model: (qk_norm, rope, softcap, use_sinks) as the layer takes them."""
        who = "MultiHeadAttention"
        self.num_heads = _positive(num_heads, "num_heads", who)
        self.key_dim = _positive(key_dim, "key_dim", who)
        self.value_dim = (self.key_dim if value_dim is None
                          else _positive(value_dim, "value_dim", who))
        self.dropout = _rate(dropout, who)
        self.use_bias = _flag(use_bias, "use_bias", who)
        if isinstance(output_shape, (tuple, list)):
            if len(output_shape) != 1:
                raise invalid("%s: output_shape %r: only a last-axis width (an int or a "
                              "1-tuple) is supported" % (who, output_shape))
            output_shape = output_shape[0]
        self.output_dim = (None if output_shape is None
                           else _positive(output_shape, "output_shape", who))
        self.sliding_window = _window(sliding_window, who, 2**32)  # a uint32_t in the desc
        self.use_gate = _flag(use_gate, "use_gate", who)
        self._open(open_model, self.key_dim, "key_dim", who)

    def _config(self):
        return {"num_heads": self.num_heads, "key_dim": self.key_dim,
                "value_dim": self.value_dim, "dropout": self.dropout,
                "use_bias": self.use_bias, "use_gate": self.use_gate,
                "output_shape": self.output_dim, "sliding_window": self.sliding_window}

    def _desc(self, widths):
        return ffi.new("vkattn_mha_desc *", {
            "num_heads": self.num_heads, "key_dim": self.key_dim, "value_dim": self.value_dim,
            "query_width": widths[0], "value_width": widths[1], "key_width": widths[2],
            "output_dim": self.out_width(widths), "no_bias": not self.use_bias,
            "dropout": self.dropout, "sliding_window": self.sliding_window or 0,
            "use_gate": self.use_gate})

    def out_width(self, widths):
        return self.output_dim or widths[0]

    def scores_shape(self, b, tq, tv):
        return (b, self.num_heads, tq, tv)

    def axes(self, widths):
        return dict(super().axes(widths), output_dim=self.out_width(widths),
                    heads=self.num_heads, kv_heads=self.num_heads, key_dim=self.key_dim,
                    value_dim=self.value_dim)


class GroupedQueryAttentionSpec(_OpenModelSpec):
    """Keras's GroupedQueryAttention: MultiHeadAttention's weights with Nkv key/value
    heads (vkattn_gqa_weights is vkattn_mha_weights); output width = query width."""

    kind, desc_type, weights_type = "gqa", "vkattn_gqa_desc", "vkattn_gqa_weights"
    layer = "GroupedQueryAttention"

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, who="GroupedQueryAttention",
                 use_gate=False, open_model=(None, None, None, False)):
        self.head_dim = _positive(head_dim, "head_dim", who)
        self.num_query_heads = _positive(num_query_heads, "num_query_heads", who)
        self.num_key_value_heads = _positive(num_key_value_heads, "num_key_value_heads", who)
        if self.num_query_heads % self.num_key_value_heads:
            raise invalid("%s: num_query_heads %d is not a multiple of num_key_value_heads %d"
                          % (who, self.num_query_heads, self.num_key_value_heads))
        self.dropout = _rate(dropout, who)
        self.use_bias = _flag(use_bias, "use_bias", who)
        self.sliding_window = _window(sliding_window, who, 2**31)  # an int32_t in the desc
        self.use_gate = _flag(use_gate, "use_gate", who)
        self._open(open_model, self.head_dim, "head_dim", who)

    def _config(self):
        return {"head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "dropout": self.dropout,
                "use_bias": self.use_bias, "use_gate": self.use_gate,
                "sliding_window": self.sliding_window}

    def _desc(self, widths):
        return ffi.new("vkattn_gqa_desc *", {
            "head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
            "num_key_value_heads": self.num_key_value_heads,
            "query_width": widths[0], "value_width": widths[1], "key_width": widths[2],
            "no_bias": not self.use_bias, "dropout": self.dropout,
            "sliding_window": self.sliding_window or 0, "use_gate": self.use_gate})

    def out_width(self, widths):
        return widths[0]

    def scores_shape(self, b, tq, tv):
        return (b, self.num_query_heads, tq, tv)

    def axes(self, widths):
        return dict(super().axes(widths), output_dim=widths[0], heads=self.num_query_heads,
                    kv_heads=self.num_key_value_heads, key_dim=self.head_dim,
                    value_dim=self.head_dim)


def layer_call(batch, tq, tv, use_causal_mask, training, seed, offset, return_scores, path,
               who):
    """The C vkattn_layer_call of one call."""
    try:
        causal = _CAUSAL[use_causal_mask]
    except (KeyError, TypeError):
        raise invalid("%s: use_causal_mask must be a bool, \"top_left\" or \"bottom_right\"; "
                      "got %r" % (who, use_causal_mask)) from None
    if path not in _PATHS:
        raise invalid("%s: path must be one of %s; got %r" % (who, ", ".join(_PATHS), path))
    for name, v in (("seed", seed), ("offset", offset)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < 2**64:
            raise invalid("%s: %s must be an int in [0, 2**64); got %r" % (who, name, v))
    return ffi.new("vkattn_layer_call *", {
        "batch": batch, "tq": tq, "tv": tv, "causal": causal, "training": bool(training),
        "seed": int(seed), "offset": int(offset),
        "return_attention_scores": bool(return_scores), "path": _PATHS[path]})


def widths_of(spec, q, v, k):
    """(query_width, value_width, key_width) of the inputs, key defaulting to value."""
    return (q[-1], v[-1], (k if k is not None else v)[-1])


def unpack_inputs(inputs, who):
    """Keras's inputs=[query, value] or [query, value, key]."""
    if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
        raise invalid("%s: inputs must be a list [query, value] or [query, value, key]" % who)
    return inputs[0], inputs[1], inputs[2] if len(inputs) == 3 else None


def unpack_mask(mask, who):
    """Keras's mask=[query_mask, value_mask] (either may be None)."""
    if mask is None:
        return None, None
    if not isinstance(mask, (list, tuple)) or len(mask) != 2:
        raise invalid("%s: mask must be a list [query_mask, value_mask]" % who)
    return mask[0], mask[1]


# what a float mask that is not 0/1 should have been (mask01's hints)
_ADDITIVE = ("; an additive mask (0 and -inf, as PyTorch's float attn_mask) is not a mask: "
             "pass `m == 0`")
_PADDING = ("; PyTorch's float key_padding_mask is additive (0 and -inf): pass `m != 0` "
            "(True = padding)")


class CallArrays:
    """One call's inputs as float32 arrays, with B, Tq, Tv and the output shapes. Every
    shape is checked against the others here, naming the argument: the library would
    count only elements, and the CPU references read raw pointers. The value masks
    (value_mask, key_mask and PyTorch's key_padding_mask, True = padding) become one
    (B, Tv) mask in vm."""

    def __init__(self, spec, who, query, value, key, query_mask, value_mask, attention_mask,
                 key_mask=None, key_padding_mask=None):
        self.q = f32(query, "%s: query" % who, spec.query_ranks, device=True)
        self.v = f32(value, "%s: value" % who, (3,), device=True)
        self.k = f32(key, "%s: key" % who, (3,), device=True)
        self.batch = b = self.q.shape[0]
        self.tq = tq = self.q.shape[1] if self.q.ndim == 3 else 1
        self.tv = tv = self.v.shape[1]
        if self.v.shape[0] != b:
            raise invalid("%s: value has shape %s; its batch must be query's, %d"
                          % (who, self.v.shape, b))
        if self.k is not None and self.k.shape[:2] != self.v.shape[:2]:
            raise invalid("%s: key has shape %s; its batch and length must be value's %s"
                          % (who, self.k.shape, self.v.shape[:2]))
        self.qm = self._rows(query_mask, "query_mask", who, (b, tq), "(B, Tq)")
        masks = [self._rows(m, name, who, (b, tv), "(B, Tv)")
                 for name, m in (("value_mask", value_mask), ("key_mask", key_mask))]
        pad = self._rows(key_padding_mask, "key_padding_mask", who, (b, tv), "(B, Tv)",
                         _PADDING, "1 = padding, ignored")
        masks.append(None if pad is None else 1 - pad)
        masks = [m for m in masks if m is not None]
        self.vm = None
        if masks:  # AND-ed, as Keras joins key_mask to value_mask
            self.vm = np.ascontiguousarray(np.prod(masks, axis=0, dtype=np.float32))
        self.am = mask01(attention_mask, "%s: attention_mask" % who, (1, 2, 3, 4), _ADDITIVE)
        if self.am is not None:
            self._check_attention_mask(spec, who)
        self.widths = widths_of(spec, self.q.shape, self.v.shape,
                                None if self.k is None else self.k.shape)
        self.qp = self.kp = None  # positions(): the multi-head layers' rope

    def positions(self, spec, who, query_positions=None, key_positions=None):
        """The rotary embedding's positions (qp (B, Tq), kp (B, Tv), f32, or None)."""
        rope = spec.open_model.rope if spec.open_model is not None else None
        self.qp = _open_model.positions_of(query_positions, "query_positions", who,
                                           (self.batch, self.tq), "(B, Tq)", rope)
        self.kp = _open_model.positions_of(key_positions, "key_positions", who,
                                           (self.batch, self.tv), "(B, Tv)", rope)

    def _rows(self, m, name, who, full, axes, hint=_ADDITIVE, meaning="1 = may attend"):
        """A (B, T) mask, broadcast numpy-style from what was given ((T,) serves every
        batch row); a rank-2 query's query_mask may also be (B,)."""
        a = mask01(m, "%s: %s" % (who, name), (1, 2), hint, meaning)
        if a is None:
            return None
        if name == "query_mask" and self.q.ndim == 2 and a.ndim == 1:
            if a.shape[0] not in (1, full[0]):
                raise invalid("%s: query_mask has shape %s; expected (B,) = (%d,) for a "
                              "rank-2 query" % (who, a.shape, full[0]))
            a = a[:, None]
        try:
            return np.ascontiguousarray(np.broadcast_to(a, full))
        except ValueError:
            raise invalid("%s: %s has shape %s; expected %s = %s"
                          % (who, name, a.shape, axes, full)) from None

    def _check_attention_mask(self, spec, who):
        """Keras's broadcast (the library's rule): rank 1..3 right-aligned against
        (B, Tq, Tv), rank 4 (the multi-head layers) against (B, H, Tq, Tv), each dim 1
        or the full size."""
        shape = self.am.shape
        full3 = (self.batch, self.tq, self.tv)
        full4 = spec.scores_shape(*full3) if spec.multi_head else None
        if len(shape) == 4 and not spec.multi_head:
            raise invalid("%s: attention_mask has shape %s; rank 4 (B, H, Tq, Tv) is for the "
                          "multi-head layers; expected a shape that broadcasts to "
                          "(B, Tq, Tv) = %s" % (who, shape, full3))
        target = full4 if len(shape) == 4 else full3[3 - len(shape):]
        if any(s not in (1, f) for s, f in zip(shape, target)):
            raise invalid("%s: attention_mask has shape %s, which does not broadcast to "
                          "(B, Tq, Tv) = %s%s" % (who, shape, full3, "" if full4 is None
                                                  else " or (B, H, Tq, Tv) = %s" % (full4,)))

    def output_shape(self, spec, widths):
        dout = spec.out_width(widths)
        if self.q.ndim == 2:
            return (self.batch, dout)
        return (self.batch, self.tq, dout)


# after the classes: _arrays needs nothing from here
from ._arrays import f32, mask01  # noqa: E402
