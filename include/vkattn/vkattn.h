/* vkattn/vkattn.h - everything public in one include.
 *
 * vkattn runs attention layers as Vulkan compute shaders on any GPU (and on
 * lavapipe). Start with vkattn/context.h (a device), then vkattn/tensor.h
 * (data), then the ops (matmul.h, softmax.h, additive.h, heads.h, dropout.h,
 * sdpa.h) or the layers (attention.h, additive_attention.h, bahdanau.h,
 * mha.h, gqa.h: each layer's whole API in its one header). Every op and layer has a *_record that records into the app's
 * command buffer (contract in vkattn/matmul.h), or, given VKATTN_RUN_NOW,
 * submits and waits, or, given VKATTN_PREPARE, compiles ahead
 * (vkattn/context.h). Every op has a CPU reference in vkattn/reference.h,
 * every layer in its vkattn/<layer>_host.h (its Vulkan-free half, which its
 * <layer>.h includes, with its desc, weights and safetensors); both are pure C
 * with no Vulkan.
 *
 * Vulkan headers: vkattn's headers include only <vulkan/vulkan_core.h> (the
 * handle types), never <vulkan/vulkan.h>. An app that links libvulkan needs
 * nothing special. An app that loads Vulkan itself (volk, or its own loader
 * with VK_NO_PROTOTYPES) must define VK_NO_PROTOTYPES before vkattn's headers
 * come in: best project-wide (-DVK_NO_PROTOTYPES, or
 * target_compile_definitions(app PRIVATE VK_NO_PROTOTYPES)). Otherwise
 * vulkan_core.h declares the vk* prototypes, and volk's vk* pointer globals,
 * declared later, clash with them. Including volk.h before any vkattn header
 * also works, since volk.h defines VK_NO_PROTOTYPES itself. vkattn never uses
 * the app's vk* globals: it loads its own pointers (vkattn/context.h).
 *
 * Semantics of every op and layer: docs/SEMANTICS.md in the source tree. The
 * case files of attnbench check: docs/CASES.md.
 *
 * Two public headers are not included here, since an app rarely needs them:
 * vkattn/peak.h (measure the device's FMA rate and copy bandwidth, to judge
 * speed) and vkattn/advanced.h (benchmarking and testing overrides).
 */
#ifndef VKATTN_VKATTN_H
#define VKATTN_VKATTN_H

#include "vkattn/additive.h"
#include "vkattn/additive_attention.h"
#include "vkattn/additive_attention_host.h"
#include "vkattn/additive_backward.h"
#include "vkattn/attention.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/context.h"
#include "vkattn/decode.h"
#include "vkattn/dropout.h"
#include "vkattn/dtype.h"
#include "vkattn/export.h"
#include "vkattn/gqa.h"
#include "vkattn/gqa_host.h"
#include "vkattn/half.h"
#include "vkattn/head_op.h"
#include "vkattn/heads.h"
#include "vkattn/kv_cache.h"
#include "vkattn/layer_backward.h"
#include "vkattn/layer_call.h"
#include "vkattn/layer_common.h"
#include "vkattn/layer_params.h"
#include "vkattn/loss.h"
#include "vkattn/matmul.h"
#include "vkattn/matmul_backward.h"
#include "vkattn/mha.h"
#include "vkattn/mha_host.h"
#include "vkattn/op_params.h"
#include "vkattn/optim.h"
#include "vkattn/philox.h"
#include "vkattn/reference.h"
#include "vkattn/reference_backward.h"
#include "vkattn/result.h"
#include "vkattn/safetensors.h"
#include "vkattn/sdpa.h"
#include "vkattn/sdpa_backward.h"
#include "vkattn/slicer.h"
#include "vkattn/softmax.h"
#include "vkattn/softmax_backward.h"
#include "vkattn/tensor.h"
#include "vkattn/timer.h"
#include "vkattn/train_params.h"
#include "vkattn/version.h"
#include "vkattn/weights.h"

/* vkattn_get_version: vkattn/version.h */

#endif /* VKATTN_VKATTN_H */
