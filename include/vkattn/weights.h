/* vkattn/weights.h - layer weights from and to safetensors files, Vulkan-free.
 *
 * The file API and what every layer's load/free/save does are in
 * vkattn/safetensors.h; each layer's vkattn_X_weights_load, _free and _save in
 * its vkattn/<layer>_host.h (included by vkattn/<layer>.h). This header
 * gathers them all, for apps written before the split and for tools that
 * convert any layer's weights without Vulkan.
 */
#ifndef VKATTN_WEIGHTS_H
#define VKATTN_WEIGHTS_H

#include "vkattn/safetensors.h"
#include "vkattn/additive_attention_host.h"
#include "vkattn/attention_host.h"
#include "vkattn/bahdanau_host.h"
#include "vkattn/gqa_host.h"
#include "vkattn/mha_host.h"

#endif /* VKATTN_WEIGHTS_H */
