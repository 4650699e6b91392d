/* vkattn/layer_backward.h - the gradients of every layer on the GPU and the
 * layers' weights as tensors.
 *
 * Each layer's backward (vkattn_X_backward_record), weight-tensor struct and
 * vkattn_X_get_weight_tensors are now in its own header, vkattn/<layer>.h;
 * vkattn_layer_grads and the contract every backward follows (with a whole
 * training step) are in vkattn/layer_common.h. This header gathers the five
 * layers, for apps written before the split.
 */
#ifndef VKATTN_LAYER_BACKWARD_H
#define VKATTN_LAYER_BACKWARD_H

#include "vkattn/layer_common.h"
#include "vkattn/additive_attention.h"
#include "vkattn/attention.h"
#include "vkattn/bahdanau.h"
#include "vkattn/gqa.h"
#include "vkattn/mha.h"

#endif /* VKATTN_LAYER_BACKWARD_H */
