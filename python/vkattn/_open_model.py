"""The open-model options of MultiHeadAttention and GroupedQueryAttention (QK-norm,
rotary embeddings, logit soft-capping, attention sinks) and the call's positions:
checked when the layer is made, as Keras checks its arguments (the library would see
them only at the first call), written into the C desc, and read back as a config.
The order per head (vkattn/mha_host.h): QK-norm, then RoPE, then the scaled scores
soft-capped, then masked; sinks join every softmax denominator.
"""
import math
import numbers

import numpy as np

from .errors import invalid

_LAYOUTS = {"half": 0, "interleaved": 1}  # vkattn_rope_layout
_ROPE_KEYS = ("max_wavelength", "scaling_factor", "rotary_dim", "layout")
# positions travel as f32: integers above 2**24 would be rounded
POSITION_LIMIT = 2**24


def _real(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _epsilon(value, who):
    # the library's range: (0, 1] (0 in the desc means its default, 1e-6)
    if _real(value) and 0.0 < float(value) <= 1.0:
        return float(value)
    raise invalid("%s: qk_norm's epsilon must be a number in (0, 1]; got %r" % (who, value))


def qk_norm_of(value, who):
    """None (off), an epsilon, or {"epsilon": e} (Keras RMSNormalization's config key;
    {} = 1e-6) -> None or the epsilon."""
    if value is None:
        return None
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"epsilon"})
        if unknown:
            raise invalid("%s: qk_norm has unknown key %r; it takes only \"epsilon\""
                          % (who, unknown[0]))
        return _epsilon(value.get("epsilon", 1e-6), who)
    if _real(value):
        return _epsilon(value, who)
    raise invalid("%s: qk_norm must be None, an epsilon or {\"epsilon\": e}; got %r"
                  % (who, value))


def rope_of(value, head_width, head_name, who):
    """None (off) or a dict of KerasHub RotaryEmbedding's names: max_wavelength
    (10000), scaling_factor (1), rotary_dim (None = the head width; even), layout
    ("half", Llama's rotate_half, or "interleaved", GPT-J's) -> None or the dict with
    every key filled in."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid("%s: rope must be None or a dict with %s; got %r"
                      % (who, ", ".join(_ROPE_KEYS), value))
    unknown = sorted(set(value) - set(_ROPE_KEYS))
    if unknown:
        raise invalid("%s: rope has unknown key %r; its keys are %s"
                      % (who, unknown[0], ", ".join(_ROPE_KEYS)))
    wave = value.get("max_wavelength", 10000.0)
    if not (_real(wave) and math.isfinite(wave) and wave > 1):
        raise invalid("%s: rope max_wavelength must be a finite number > 1; got %r"
                      % (who, wave))
    scale = value.get("scaling_factor", 1.0)
    if not (_real(scale) and math.isfinite(scale) and scale > 0):
        raise invalid("%s: rope scaling_factor must be a finite number > 0; got %r"
                      % (who, scale))
    dim = value.get("rotary_dim")
    if dim is not None and (isinstance(dim, bool) or not isinstance(dim, (int, np.integer))
                            or dim < 2 or dim % 2 or dim > head_width):
        raise invalid("%s: rope rotary_dim must be None or an even int in [2, %s = %d]; "
                      "got %r" % (who, head_name, head_width, dim))
    layout = value.get("layout", "half")
    if layout not in _LAYOUTS:
        raise invalid("%s: rope layout must be \"half\" or \"interleaved\"; got %r"
                      % (who, layout))
    return {"max_wavelength": float(wave), "scaling_factor": float(scale),
            "rotary_dim": None if dim is None else int(dim), "layout": layout}


def softcap_of(value, who):
    """None (off) or a finite number > 0 (Gemma 2's attn_logit_softcapping)."""
    if value is None:
        return None
    if _real(value) and math.isfinite(value) and value > 0:
        return float(value)
    raise invalid("%s: softcap must be None or a finite number > 0; got %r" % (who, value))


class OpenModel:
    """One layer's open-model options, checked."""

    def __init__(self, qk_norm, rope, softcap, use_sinks, head_width, head_name, who, flag):
        self.qk_norm = qk_norm_of(qk_norm, who)
        self.rope = rope_of(rope, head_width, head_name, who)
        self.softcap = softcap_of(softcap, who)
        self.use_sinks = flag(use_sinks, "use_sinks", who)

    def config(self):
        return {"qk_norm": None if self.qk_norm is None else {"epsilon": self.qk_norm},
                "rope": None if self.rope is None else dict(self.rope),
                "softcap": self.softcap, "use_sinks": self.use_sinks}

    def fill(self, desc):
        """Writes the options into a vkattn_mha_desc / vkattn_gqa_desc."""
        desc.use_qk_norm = self.qk_norm is not None
        desc.qk_norm_epsilon = self.qk_norm or 0.0
        desc.use_rope = self.rope is not None
        if self.rope is not None:
            desc.rope.max_wavelength = self.rope["max_wavelength"]
            desc.rope.scaling_factor = self.rope["scaling_factor"]
            desc.rope.rotary_dim = self.rope["rotary_dim"] or 0
            desc.rope.layout = _LAYOUTS[self.rope["layout"]]
        desc.softcap = self.softcap or 0.0
        desc.use_sinks = self.use_sinks

    def options(self):
        """The desc options of the weights these turn on (the weight table's needs):
        the QK-norm scales and the sinks, after Keras's weights."""
        return ("qk_norm",) * (self.qk_norm is not None) + ("sinks",) * self.use_sinks


def positions_of(p, name, who, full, axes, rope):
    """A call's query_positions / key_positions: None, or non-negative integers of
    shape (B, T) ((T,) serves every batch row), as float32 for the library."""
    if p is None:
        return None
    if rope is None:
        raise invalid("%s: %s is given but the layer has no rope: positions turn the "
                      "rotary embedding only" % (who, name))
    try:
        a = np.asarray(p)
    except (TypeError, ValueError) as e:
        raise invalid("%s: %s is not an array: %s" % (who, name, e)) from None
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer)
                                   or np.issubdtype(a.dtype, np.floating)):
        raise invalid("%s: %s must hold integers; got dtype %s" % (who, name, a.dtype))
    if a.size:
        bad = ~np.isfinite(a) | (a < 0) | (a >= POSITION_LIMIT) | (a != np.floor(a)) \
            if np.issubdtype(a.dtype, np.floating) else (a < 0) | (a >= POSITION_LIMIT)
        if bad.any():
            raise invalid("%s: %s holds %r; positions are integers in [0, 2**24)"
                          % (who, name, a[bad].reshape(-1)[0].item()))
    try:
        a = np.broadcast_to(a, full) if a.ndim in (1, 2) else None
    except ValueError:
        a = None
    if a is None:
        raise invalid("%s: %s has shape %s; expected %s = %s"
                      % (who, name, np.shape(p), axes, full))
    return np.ascontiguousarray(a, dtype=np.float32)
