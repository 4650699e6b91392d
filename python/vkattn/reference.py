"""The library's CPU references (double accumulation, no device): what the layers
and vkattn.sdpa compute, from the same arguments.

Each layer function takes the layer's constructor arguments, its weights as a
list in Keras's order (None = a new layer's weights), the inputs and the call's
options; dropout draws the same Philox stream (seed, offset) as the device, so
kept and dropped weights agree exactly. With grad_output= (dL/d(output)) a layer
function returns the reference backward instead: ([dL/d(query), dL/d(value)(,
dL/d(key) when key is given)], the weight gradients in Keras's order), as the
layers' gradients() does.
"""
import numpy as np

from . import _specs
from ._arrays import ptr
from ._lib import ffi, lib
from ._sdpa_args import SdpaArgs
from .errors import check, invalid
from .tensor import host


def _run(spec, who, weights, query, value, key, query_mask, value_mask, attention_mask,
         use_causal_mask, training, return_attention_scores, seed, offset, grad_output=None,
         key_mask=None, key_padding_mask=None, positions=None):
    query, value, key = host(query), host(value), host(key)  # Tensors: their contents
    a = _specs.CallArrays(spec, who, query, value, key, query_mask, value_mask, attention_mask,
                          key_mask, key_padding_mask)
    if positions:
        a.positions(spec, who, *positions)
    widths = a.widths
    spec.check_widths(widths, who, a.k is not None)
    arrays = (spec.defaults(widths) if weights is None
              else spec.check_weights(widths, weights, who))
    w = spec.pack(widths, arrays, spec.hidden_defaults())
    call = _specs.layer_call(a.batch, a.tq, a.tv, use_causal_mask, training, seed, offset,
                             return_attention_scores, "auto", who)
    out = np.empty(a.output_shape(spec, widths), np.float32)
    scores = (np.empty(spec.scores_shape(a.batch, a.tq, a.tv), np.float32)
              if return_attention_scores else None)
    io = ffi.new("vkattn_layer_host_io *")
    io.query, io.value, io.key = ptr(a.q), ptr(a.v), ptr(a.k)
    io.query_mask, io.value_mask, io.attention_mask = ptr(a.qm), ptr(a.vm), ptr(a.am)
    if a.am is not None:
        io.attention_mask_rank = a.am.ndim
        io.attention_mask_dims = list(a.am.shape) + [0] * (4 - a.am.ndim)
    io.query_positions, io.key_positions = ptr(a.qp), ptr(a.kp)
    io.output, io.scores = ptr(out, const=False), ptr(scores, const=False)
    if grad_output is not None:
        return _backward(spec, who, widths, w, call, io, a, grad_output)
    check(getattr(lib, "vkattn_reference_%s" % spec.kind)(spec.desc(widths), w, call, io))
    return (out, scores) if return_attention_scores else out


def _backward(spec, who, widths, w, call, io, a, grad_output):
    """The reference backward: ([dquery, dvalue(, dkey)], weight gradients, Keras order)."""
    g = _specs.f32(grad_output, "%s: grad_output" % who)
    if g.shape != a.output_shape(spec, widths):
        raise invalid("%s: grad_output must have the output's shape %s; got %s"
                      % (who, a.output_shape(spec, widths), g.shape))
    inputs = [np.empty(a.q.shape, np.float32), np.empty(a.v.shape, np.float32)]
    if a.k is not None:
        inputs.append(np.empty(a.k.shape, np.float32))
    grads = ffi.new("vkattn_layer_host_grads *")
    grads.grad_query, grads.grad_value = ptr(inputs[0], False), ptr(inputs[1], False)
    if a.k is not None:
        grads.grad_key = ptr(inputs[2], False)
    grad_w, read = spec.unpacked(widths)
    check(getattr(lib, "vkattn_reference_%s_backward" % spec.kind)(
        spec.desc(widths), w, call, io, ptr(g), grads, grad_w))
    return inputs, read()


def attention(query, value, key=None, *, weights=None, use_scale=False, score_mode="dot",
              dropout=0.0, query_mask=None, value_mask=None, attention_mask=None,
              use_causal_mask=False, training=False, return_attention_scores=False, seed=0,
              offset=0, grad_output=None):
    """vkattn.Attention's reference: weights [scale][, concat_score_weight]."""
    return _run(_specs.AttentionSpec(use_scale, score_mode, dropout), "reference.attention",
                weights, query, value, key, query_mask, value_mask, attention_mask,
                use_causal_mask, training, return_attention_scores, seed, offset, grad_output)


def additive_attention(query, value, key=None, *, weights=None, use_scale=True, dropout=0.0,
                       query_mask=None, value_mask=None, attention_mask=None,
                       use_causal_mask=False, training=False, return_attention_scores=False,
                       seed=0, offset=0, grad_output=None):
    """vkattn.AdditiveAttention's reference: weights [scale (query_width,)] if use_scale."""
    return _run(_specs.AdditiveAttentionSpec(use_scale, dropout),
                "reference.additive_attention", weights, query, value, key, query_mask,
                value_mask, attention_mask, use_causal_mask, training,
                return_attention_scores, seed, offset, grad_output)


def bahdanau_attention(query, value, key=None, *, units, weights=None, dropout=0.0,
                       query_mask=None, value_mask=None, attention_mask=None,
                       use_causal_mask=False, training=False, return_attention_scores=False,
                       seed=0, offset=0, grad_output=None):
    """vkattn.BahdanauAttention's reference: weights [query_kernel, key_kernel,
    score_kernel (units, 1), score_bias (1,)]."""
    return _run(_specs.BahdanauSpec(units, dropout), "reference.bahdanau_attention", weights,
                query, value, key, query_mask, value_mask, attention_mask, use_causal_mask,
                training, return_attention_scores, seed, offset, grad_output)


def multi_head_attention(query, value, key=None, *, num_heads, key_dim, value_dim=None,
                         use_bias=True, output_shape=None, weights=None, dropout=0.0,
                         query_mask=None, value_mask=None, key_mask=None, attention_mask=None,
                         use_causal_mask=False, training=False, return_attention_scores=False,
                         seed=0, offset=0, sliding_window=None, use_gate=False,
                         grad_output=None, key_padding_mask=None, qk_norm=None, rope=None,
                         softcap=None, use_sinks=False, query_positions=None,
                         key_positions=None):
    """vkattn.MultiHeadAttention's reference: weights as its get_weights();
    key_padding_mask as the layer's (PyTorch's polarity, True = padding); qk_norm,
    rope, softcap, use_sinks and the positions as the layer's (weights=None: the
    norms ones, the sinks zeros, as a new layer's)."""
    spec = _specs.MultiHeadAttentionSpec(num_heads, key_dim, value_dim, dropout, use_bias,
                                         output_shape, sliding_window, use_gate,
                                         (qk_norm, rope, softcap, use_sinks))
    return _run(spec, "reference.multi_head_attention", weights, query, value, key,
                query_mask, value_mask, attention_mask, use_causal_mask, training,
                return_attention_scores, seed, offset, grad_output, key_mask, key_padding_mask,
                (query_positions, key_positions))


def grouped_query_attention(query, value, key=None, *, head_dim, num_query_heads,
                            num_key_value_heads, use_bias=True, sliding_window=None,
                            weights=None, dropout=0.0, query_mask=None, value_mask=None,
                            key_mask=None, attention_mask=None, use_causal_mask=False,
                            training=False, return_attention_scores=False, seed=0, offset=0,
                            use_gate=False, grad_output=None, key_padding_mask=None,
                            qk_norm=None, rope=None, softcap=None, use_sinks=False,
                            query_positions=None, key_positions=None):
    """vkattn.GroupedQueryAttention's reference: weights as its get_weights();
    key_padding_mask as the layer's (PyTorch's polarity, True = padding); the open-model
    options and positions as multi_head_attention's."""
    who = "reference.grouped_query_attention"
    spec = _specs.GroupedQueryAttentionSpec(head_dim, num_query_heads, num_key_value_heads,
                                            dropout, use_bias, sliding_window, who, use_gate,
                                            (qk_norm, rope, softcap, use_sinks))
    return _run(spec, who, weights, query, value, key, query_mask, value_mask, attention_mask,
                use_causal_mask, training, return_attention_scores, seed, offset, grad_output,
                key_mask, key_padding_mask, (query_positions, key_positions))


group_query_attention = grouped_query_attention


def sdpa(q, k, v, *, scale=None, bias=None, value_mask=None, mask=None, causal=False,
         masked_row="zero", dropout=0.0, seed=0, offset=0, return_weights=False,
         weights_after_dropout=False, sliding_window=None):
    """vkattn.sdpa's reference; same arguments (no path or context)."""
    a = SdpaArgs(host(q), host(k), host(v), scale, bias, value_mask, mask, causal, masked_row,
                 dropout, seed, offset, return_weights, weights_after_dropout, "auto",
                 sliding_window)
    out = np.empty(a.out_shape, np.float32)
    weights = np.empty(a.weights_shape, np.float32) if a.return_weights else None
    check(lib.vkattn_reference_sdpa(a.params, ffi.NULL, ptr(a.q), ptr(a.k), ptr(a.v),
                                    ptr(a.bias), ptr(a.value_mask), ptr(a.mask),
                                    ptr(out, const=False), ptr(weights, const=False)))
    return a.result(out, weights)


# the references of vkattn.sdpa_backward and vkattn.sdpa_decode, kept with them
from .kv_cache import reference_decode as sdpa_decode  # noqa: E402
from .sdpa_backward import reference_sdpa_backward as sdpa_backward  # noqa: E402
