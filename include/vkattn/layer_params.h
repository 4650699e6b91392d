/* vkattn/layer_params.h - every layer as plain data, Vulkan-free: descs, weights,
 * per-call options and the CPU references of all five layers.
 *
 * Each layer is now one header, vkattn/<layer>.h, which includes its
 * Vulkan-free half vkattn/<layer>_host.h (desc, weights, CPU reference forward
 * and backward, safetensors); what every layer shares is in vkattn/layer_call.h.
 * This header gathers the five Vulkan-free halves, for apps written before
 * the split and for code that wants every layer without Vulkan.
 */
#ifndef VKATTN_LAYER_PARAMS_H
#define VKATTN_LAYER_PARAMS_H

#include "vkattn/layer_call.h"
#include "vkattn/additive_attention_host.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"

#endif /* VKATTN_LAYER_PARAMS_H */
