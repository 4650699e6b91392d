/* Head split and merge of a chunk of rows (layers/mha.c's cached calls): the
 * split reads rows [t0, t0 + seq) of a (B, seq_all, H, d) tensor into
 * (B, H, seq, d); the merge writes (B, H, seq, d) into those rows, leaving
 * the others untouched. Checks as vkattn_heads_split_record's, with the
 * (B, seq_all, H, d) side sized by seq_all. names: what messages call io->in
 * and io->out (NULL: those; the backward's io->grad_out and io->grad_in). */
#ifndef VKA_OPS_HEADS_ROWS_H
#define VKA_OPS_HEADS_ROWS_H

#include <stdbool.h>

#include "vkattn/heads.h"

vkattn_result vka_heads_rows_record(vkattn_context *ctx, VkCommandBuffer cmd, const char *caller,
                                   const vkattn_heads_params *params, const vkattn_heads_io *io,
                                   bool split, uint32_t seq_all, uint32_t t0,
                                   const char *const names[2]);

#endif /* VKA_OPS_HEADS_ROWS_H */
