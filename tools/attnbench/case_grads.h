/* Case-file gradients (docs/CASES.md): a case with grad_output also runs the
 * layer backward on the device and the CPU reference backward, and compares
 * both with each other and with the case's expected_grads. */
#ifndef ATTNBENCH_CASE_GRADS_H
#define ATTNBENCH_CASE_GRADS_H

#include "case.h"

typedef struct ab_grads_result {
    bool ran;       /* both backward passes ran; the numbers below are set */
    bool ok;        /* device vs reference, and both vs expected where given */
    json_t *grads;  /* {name: nested array (a number for a scalar)} of the device's */
    double err_ref; /* max |device - reference| over every gradient */
    bool has_expected;
    double err_exp; /* max |device - expected| over the expected gradients */
    bool ref_ok, dev_exp_ok, ref_exp_ok;
    char error[AB_CASE_ERR];
} ab_grads_result;

/* Runs the case's backward (the case has grad_output) into *r. */
void ab_case_grads_check(vkattn_context *ctx, const ab_case *c, ab_grads_result *r);
void ab_grads_result_free(ab_grads_result *r);

#endif
