/* vkattn/train_params.h - the hyper-parameters of the training ops: the
 * optimizer step (vkattn/optim.h) and the mean-squared-error loss
 * (vkattn/loss.h). Plain structs, no Vulkan, shared by the GPU ops and their
 * CPU references (vkattn/reference_backward.h).
 *
 * Unlike most vkattn structs, a zero field here is the value zero, not a
 * default: momentum 0, weight decay 0 and beta1 0 are all meaningful. The
 * PyTorch defaults are written in each field's comment.
 */
#ifndef VKATTN_TRAIN_PARAMS_H
#define VKATTN_TRAIN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The update rule, with PyTorch's formulas (vkattn/optim.h spells them out). */
typedef enum vkattn_optim_algorithm {
    VKATTN_OPTIM_SGD = 0, /* torch.optim.SGD */
    VKATTN_OPTIM_ADAM,    /* torch.optim.Adam: weight decay as an L2 term in the gradient */
    VKATTN_OPTIM_ADAMW,   /* torch.optim.AdamW: decoupled weight decay */
} vkattn_optim_algorithm;

typedef struct vkattn_optim_params {
    vkattn_optim_algorithm algorithm;
    float lr;           /* >= 0 (PyTorch: SGD has none, Adam 1e-3, AdamW 1e-3) */
    float weight_decay; /* >= 0 (PyTorch: 0, AdamW 1e-2) */
    /* SGD only */
    float momentum;  /* >= 0 (PyTorch: 0) */
    float dampening; /* finite (PyTorch: 0) */
    bool nesterov;   /* needs momentum > 0 and dampening 0, as in PyTorch */
    /* Adam and AdamW only */
    float beta1, beta2; /* each in [0, 1) (PyTorch: 0.9, 0.999) */
    float eps;          /* >= 0 (PyTorch: 1e-8) */
} vkattn_optim_params;

/* Elements of the step tensor: [0] the step number t (a float, exact up to
 * 2^24 steps), [1] beta1^t, [2] beta2^t (Adam/AdamW; SGD leaves them 0). All
 * zero before the first step. */
#define VKATTN_OPTIM_STEP_COUNT 3

/* loss = mean((pred - target)^2) over `count` elements. */
typedef struct vkattn_mse_params {
    uint32_t count;   /* required: elements of pred and target (and of the gradient) */
    float loss_scale; /* scales the gradient only; 0 = 1 */
} vkattn_mse_params;

#ifdef __cplusplus
}
#endif

#endif /* VKATTN_TRAIN_PARAMS_H */
