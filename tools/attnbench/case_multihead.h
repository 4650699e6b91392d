/* The case-file params MultiHeadAttention and GroupedQueryAttention share
 * (docs/CASES.md): their weight keys and the open-model options. */
#ifndef ATTNBENCH_CASE_MULTIHEAD_H
#define ATTNBENCH_CASE_MULTIHEAD_H

#include "case_params.h"

/* The open-model options of the multi-head layers (vkattn/mha_host.h), the
 * desc's fields of the same names; head_width names the per-head width
 * ("head_dim", "key_dim"), whose value bounds rope.rotary_dim. */
typedef struct ab_open_model {
    bool use_qk_norm;
    float qk_norm_epsilon;
    bool use_rope;
    vkattn_rope_params rope;
    float softcap;
    bool use_sinks;
} ab_open_model;

#define AB_OPEN_MODEL_KEYS "qk_norm", "rope", "softcap", "use_sinks"

#define AB_OPEN_MODEL_SET(desc, o)                                                                \
    ((desc)->use_qk_norm = (o).use_qk_norm, (desc)->qk_norm_epsilon = (o).qk_norm_epsilon,    \
     (desc)->use_rope = (o).use_rope, (desc)->rope = (o).rope, (desc)->softcap = (o).softcap, \
     (desc)->use_sinks = (o).use_sinks)

bool ab_open_model_parse(json_t *params, const char *head_name, uint32_t head_width,
                         ab_open_model *o, char *err, size_t err_size);

/* params.weights_file, or the object params.weights of a multi-head kind
 * (`layer` names it): its keys checked and query_norm, key_norm and sinks
 * read as o asks; *w = the object for the caller to read the kernels from
 * when AB_WEIGHTS_INLINE. head: the per-head width, heads: the query heads. */
ab_weights_source ab_multihead_weights(ab_case *c, json_t *params, const char *layer,
                                       bool use_bias, bool use_gate, const ab_open_model *o,
                                       uint32_t head, uint32_t heads, vkattn_mha_weights *m,
                                       float *dropout, json_t **w, char *err, size_t err_size);

#endif
