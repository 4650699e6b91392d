"""vkattn.SGD, vkattn.Adam, vkattn.AdamW: optimizer steps on the device
(vkattn/optim.h), with PyTorch's update rules, on float32, float16 or bfloat16
Tensors or on a layer's own weights.

    opt = vkattn.Adam(lr=1e-3)
    grads_in, grads_w = layer.gradients(q, v, grad_output=g)
    opt.step(layer, grads_w)        # the layer's weights, updated in place
    opt.step([w], [dw])             # or vkattn.Tensor parameters

Each parameter gets its optimizer state (momentum, or Adam's m and v, and the
step count) on first use, zero as in a fresh torch.optim optimizer; it lives as
long as the parameter (a Tensor or the layer) does. The state is float32 whatever
the parameter's type; a float16 or bfloat16 parameter is updated in float32 and
rounded once back, so a change under half its spacing is lost (as Keras's
"float16"/"bfloat16" policies' variables lose it; keep float32 master weights
to avoid that).
"""
import math
import weakref

import numpy as np

from . import _specs
from ._arrays import Tensors, f32
from ._lib import RUN_NOW, ffi, lib
from .errors import check, invalid
from .tensor import Tensor, check_contexts

_STEP_COUNT = 3  # VKATTN_OPTIM_STEP_COUNT


def _hyper(value, name, who, low=0.0, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise invalid("%s: %s must be a number; got %r" % (who, name, value))
    value = float(value)
    if math.isnan(value) or value < low or (high is not None and value >= high):
        raise invalid("%s: %s must be in [%g, %s); got %r"
                      % (who, name, low, "inf" if high is None else "%g" % high, value))
    return value


class _Optimizer:
    _algorithm = 0
    _state_per_element = 0

    def __init__(self, params):
        self._params = params
        self._state = weakref.WeakKeyDictionary()  # parameter owner -> {key: (state, step)}

    def _slots(self, owner, key, count, ctx):
        """(state, step) Tensors of one parameter, zero-filled on first use."""
        per = self._state.setdefault(owner, {})
        if key not in per:
            n = count * self._state_per_element
            state = Tensor.empty((n,), context=ctx) if n else None
            step = Tensor.empty((_STEP_COUNT,), context=ctx)
            for t in (state, step):
                if t is not None:
                    check(lib.vkattn_tensor_fill(t._ptr(), 0.0), ctx._handle)
            per[key] = (state, step)
        return per[key]

    def _update(self, ctx, who, param, grad, count, slots, ts):
        state, step = slots
        io = ffi.new("vkattn_optim_io *")
        io.count, io.param = count, param
        io.grad = ts.upload(grad) if not isinstance(grad, Tensor) else grad._ptr(who)
        io.state = ffi.NULL if state is None else state._ptr()
        io.step = step._ptr()
        check(lib.vkattn_optim_step_record(ctx._ptr(), RUN_NOW, self._params, io), ctx._handle)

    def step(self, params, grads):
        """One step. params: a list of vkattn.Tensor (float32, float16 or bfloat16;
        updated in place), or a built float32 layer (its weights, in place); grads:
        the matching list (numpy arrays, taken as float32, or Tensors of any of the
        three types, of the same shapes; for a layer, in get_weights() order, as the
        second list gradients() returns)."""
        who = "%s.step" % type(self).__name__
        if hasattr(params, "_spec") and hasattr(params, "_ptr"):
            return self._step_layer(params, grads, who)
        if isinstance(params, Tensor):
            params, grads = [params], [grads]
        if not isinstance(params, (list, tuple)) or not isinstance(grads, (list, tuple)) \
                or len(params) != len(grads):
            raise invalid("%s: params and grads must be lists of the same length (or a layer "
                          "and its weight gradients)" % who)
        for i, (p, g) in enumerate(zip(params, grads)):
            name = "params[%d]" % i
            if not isinstance(p, Tensor):
                raise invalid("%s: %s must be a vkattn.Tensor; got %r" % (who, name, p))
            ctx = p.context
            g = f32(g, "%s: grads[%d]" % (who, i), device=True)
            if g.shape != p.shape:
                raise invalid("%s: grads[%d] has shape %s; %s has %s"
                              % (who, i, g.shape, name, p.shape))
            check_contexts(ctx, who, (("grads[%d]" % i, g),))
            owner = p._parent if p._parent is not None else p
            with ctx._lock, Tensors(ctx) as ts:
                slots = self._slots(owner, None, p.size, ctx)
                self._update(ctx, who, p._ptr(who), g, p.size, slots, ts)

    def _step_layer(self, layer, grads, who):
        """The layer's weight tensors in place, of its dtype (a 16-bit weight is
        updated in fp32 and rounded once); grads as gradients() returns them."""
        handle = layer._ptr("step")
        layout = layer._spec.layout(layer._widths)
        if not isinstance(grads, (list, tuple)) or len(grads) != len(layout):
            raise invalid("%s: grads must be a list of %d arrays in get_weights() order"
                          % (who, len(layout)))
        kind, ctx = layer._spec.kind, layer.context
        with ctx._lock, Tensors(ctx) as ts:
            w = ffi.new("vkattn_%s_weight_tensors *" % kind)
            check(getattr(lib, "vkattn_%s_get_weight_tensors" % kind)(handle, w), ctx._handle)
            for i, ((field, shape, _), g) in enumerate(zip(layout, grads)):
                g = f32(_specs.host_values(g, layer.dtype), "%s: grads[%d]" % (who, i),
                        device=True)
                if tuple(g.shape) != tuple(shape):
                    raise invalid("%s: grads[%d] has shape %s; the layer's %s is %s"
                                  % (who, i, g.shape, field, tuple(shape)))
                count = int(np.prod(shape))
                slots = self._slots(layer, field, count, ctx)
                self._update(ctx, who, getattr(w, field), g, count, slots, ts)


class SGD(_Optimizer):
    """torch.optim.SGD: lr, momentum, dampening, weight_decay, nesterov."""

    def __init__(self, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        who = "SGD"
        p = ffi.new("vkattn_optim_params *")
        p.algorithm = 0
        p.lr = _hyper(lr, "lr", who)
        p.momentum = _hyper(momentum, "momentum", who)
        p.dampening = _hyper(dampening, "dampening", who, -math.inf)
        p.weight_decay = _hyper(weight_decay, "weight_decay", who)
        p.nesterov = bool(nesterov)
        if nesterov and (p.momentum <= 0 or p.dampening != 0):
            raise invalid("SGD: nesterov needs momentum > 0 and dampening 0 (as PyTorch)")
        self._state_per_element = 1 if p.momentum else 0
        super().__init__(p)


class Adam(_Optimizer):
    """torch.optim.Adam: lr, betas, eps, weight_decay (coupled L2)."""
    _code = 1

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        who = type(self).__name__
        p = ffi.new("vkattn_optim_params *")
        p.algorithm = self._code
        p.lr = _hyper(lr, "lr", who)
        try:
            b1, b2 = betas
        except (TypeError, ValueError):
            raise invalid("%s: betas must be a pair (beta1, beta2); got %r"
                          % (who, betas)) from None
        p.beta1 = _hyper(b1, "betas[0]", who, 0.0, 1.0)
        p.beta2 = _hyper(b2, "betas[1]", who, 0.0, 1.0)
        p.eps = _hyper(eps, "eps", who)
        p.weight_decay = _hyper(weight_decay, "weight_decay", who)
        self._state_per_element = 2
        super().__init__(p)


class AdamW(Adam):
    """torch.optim.AdamW: as Adam with decoupled weight decay (default 1e-2)."""
    _code = 2

    def __init__(self, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(lr, betas, eps, weight_decay)
