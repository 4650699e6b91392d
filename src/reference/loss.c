/* CPU reference of the mean-squared-error loss and its gradient, in double. */
#include "vkattn/reference_backward.h"

#include "core/error.h"
#include "reference/ref_internal.h"
#include "shape/train_shape.h"

vkattn_result vkattn_reference_mse(const vkattn_mse_params *p, const float *pred,
                                   const float *target, float *loss, float *grad)
{
    vkattn_result r;
    if ((r = vka_mse_check_params(NULL, __func__, p)) || (r = vka_ref_require_ptr(__func__, "pred", pred)) ||
        (r = vka_ref_require_ptr(__func__, "target", target)) ||
        (r = vka_ref_require_ptr(__func__, "loss", loss)))
        return r;
    const double n = p->count, scale = p->loss_scale != 0.0f ? p->loss_scale : 1.0;
    double sum = 0.0;
    for (size_t i = 0; i < p->count; i++) {
        const double d = (double)pred[i] - target[i];
        sum += d * d;
        if (grad)
            grad[i] = (float)(scale * 2.0 * d / n);
    }
    loss[0] = (float)(sum / n);
    return VKATTN_SUCCESS;
}
