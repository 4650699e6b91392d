"""Keras's initializer arguments (kernel_initializer=, bias_initializer=) as the C
vkattn_initializer codes (vkattn/layer_call.h), and the Keras configs that name them.

Accepted: a name ("glorot_uniform", "GlorotUniform", "zeros", ...), None (the
weight's Keras default), Keras's serialized dict {"class_name": "GlorotUniform",
"config": {"seed": 5}, ...} as get_config() writes it, or a keras.initializers
object (read through its get_config()). The library draws the values (Philox,
seeded), so a seed in the config is honoured, the numbers are vkattn's, not
Keras's. Anything else is refused, naming the argument.
"""
import numbers

from .errors import invalid

# C code, Keras class name (its get_config() is {"seed": ...} for the random ones)
_KINDS = {
    "glorot_uniform": (1, "GlorotUniform"), "glorot_normal": (2, "GlorotNormal"),
    "he_uniform": (3, "HeUniform"), "he_normal": (4, "HeNormal"),
    "lecun_uniform": (5, "LecunUniform"), "lecun_normal": (6, "LecunNormal"),
    "zeros": (7, "Zeros"), "ones": (8, "Ones"),
}
_BY_CLASS = {cls: name for name, (_, cls) in _KINDS.items()}
_ALIASES = {"zero": "zeros", "one": "ones"}
# Config keys that change nothing when they hold these values (Keras 3.15 writes
# input_axes/output_axes None: the layer then gives EinsumDense's axes, as vkattn does).
_NEUTRAL = {"seed": None, "input_axes": None, "output_axes": None}


def _name_of(value, what):
    """The snake_case name and the config of an initializer argument."""
    if isinstance(value, str):
        key = _ALIASES.get(value, value)
        key = _BY_CLASS.get(key, key)
        return key, {}
    if isinstance(value, dict):
        cls = value.get("class_name")
        config = value.get("config") or {}
        if not isinstance(cls, str) or not isinstance(config, dict):
            raise invalid("%s: a dict must be Keras's {\"class_name\": ..., \"config\": {...}}; "
                          "got %r" % (what, value))
        return _BY_CLASS.get(cls, cls), config
    if hasattr(value, "get_config"):  # a keras.initializers object
        return _BY_CLASS.get(type(value).__name__, type(value).__name__), value.get_config()
    raise invalid("%s must be an initializer name, Keras's config dict or None; got %r"
                  % (what, value))


def parse(value, what):
    """(C code, seed or None) of one initializer argument; None gives (0, None), the
    weight's Keras default."""
    if value is None:
        return 0, None
    name, config = _name_of(value, what)
    if name not in _KINDS:
        raise invalid("%s: %r is not an initializer vkattn has; it has %s"
                      % (what, value, ", ".join(sorted(_KINDS))))
    seed = config.get("seed")
    for key, v in config.items():
        if key == "seed":
            if seed is not None and (isinstance(seed, bool)
                                     or not isinstance(seed, numbers.Integral)
                                     or not 0 <= seed < 2**64):
                raise invalid("%s: seed must be None or an int in [0, 2**64); got %r"
                              % (what, seed))
        elif key not in _NEUTRAL or v != _NEUTRAL[key]:
            raise invalid("%s: config key %r = %r is not supported by vkattn (its initializers "
                          "take only a seed)" % (what, key, v))
    return _KINDS[name][0], None if seed is None else int(seed)


def config_of(code, seed, default):
    """Keras's serialized form of a C code (0 = `default`'s), for get_config()."""
    name = default if code == 0 else next(n for n, (c, _) in _KINDS.items() if c == code)
    config = {} if name in ("zeros", "ones") else {"seed": seed}
    return {"module": "keras.initializers", "class_name": _KINDS[name][1], "config": config,
            "registered_name": None}
