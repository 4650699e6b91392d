"""A multi-head layer's call with cache= (vkattn_mha_record_cached,
vkattn_gqa_record_cached): the new tokens' keys and values join the cache, and
they attend causally over everything cached."""
import numpy as np

from . import _specs
from ._arrays import Tensors, mask01
from ._lib import RUN_NOW, lib
from .errors import check, invalid
from .tensor import Tensor


def call(layer, who, query, value, key, cache, value_mask, use_causal_mask, training, others):
    from .kv_cache import KVCache  # kv_cache imports nothing from the layers
    if not isinstance(cache, KVCache):
        raise invalid("%s: cache must be a vkattn.KVCache; got %r" % (who, cache))
    for name, v in others.items():
        if v is not None and v is not False:  # not in the C cached call
            raise invalid("%s: %s is not supported with cache= (a cached call takes "
                          "value_mask only)" % (who, name))
    if use_causal_mask not in (True, "top_left", "bottom_right"):
        raise invalid("%s: a cached call is causal: pass use_causal_mask=True with cache= "
                      "(got %r)" % (who, use_causal_mask))
    if training and layer._spec.dropout > 0:
        raise invalid("%s: a cached call has no dropout: pass training=False with cache= "
                      "(the layer's dropout is %g)" % (who, layer._spec.dropout))
    if layer._context is not None and cache.context is not layer._context:
        raise invalid("%s: cache is on another Context than the layer" % who)
    masks = dict(query_mask=None, value_mask=None, attention_mask=None)
    a, c = layer._prepare_call(who, query, value, key, masks, True, training, False, None,
                               None, "auto", False)
    if cache.context is not layer._context:
        raise invalid("%s: cache is on another Context than the layer" % who)
    if a.tv != a.tq:
        raise invalid("%s: value has %d tokens and query %d; a cached call takes the same "
                      "new tokens in both" % (who, a.tv, a.tq))
    if a.batch != cache.batch:
        raise invalid("%s: query has batch %d; the cache holds %d sequences"
                      % (who, a.batch, cache.batch))
    vm = mask01(value_mask, "%s: value_mask" % who, (1, 2))
    if vm is not None:
        full = (cache.batch, cache.capacity)
        try:
            vm = np.ascontiguousarray(np.broadcast_to(vm, full))
        except ValueError:
            raise invalid("%s: value_mask has shape %s; with cache= it covers the cache's rows, "
                          "(B, capacity) = %s" % (who, vm.shape, full)) from None
    out_shape = a.output_shape(layer._spec, layer._widths)
    ctx = layer._context
    dt = _specs.dtype_code(layer._dtype)
    with ctx._lock, Tensors(ctx, keep=isinstance(a.q, Tensor)) as ts:
        handle = layer._ptr("__call__")
        io = layer._io(ts, a, dt)
        io.value_mask = ts.upload(vm)
        record = getattr(lib, "vkattn_%s_record_cached" % layer._spec.kind)
        check(record(handle, RUN_NOW, c, io, cache._ptr(who)), ctx._handle)
        out = ts.download(io.output, out_shape)
    return out if isinstance(out, Tensor) else _specs.host_result(out, layer._dtype)
