/* 0.2 calls, as an app wrote them (tests/migrate/check.py; migrate-0.3: keep). */
static vkattn_result f(vkattn_context *ctx, vkattn_mha *mha, vkattn_kv_cache *cache,
                       vkattn_tensor *t, const float *x, float *y)
{
    vkattn_result r = vkattn_softmax_record(ctx, VKATTN_RUN_NOW, &sp, &sio);
    r = vkattn_mha_record(mha, VKATTN_PREPARE,
                           &call, /* a comment, with a comma */ &io);
    r = vkattn_mha_record_cached(mha, VKATTN_RUN_NOW, &call, &io, cache);
    r = vkattn_gqa_backward_record(gqa, VKATTN_PREPARE, &call, &io, &grads, &gw);
    r = vkattn_kv_cache_reset_record(cache, VKATTN_RUN_NOW, VKATTN_KV_CACHE_ALL);
    r = vkattn_sdpa_record(ctx, cmd, &p, &sio);   /* already 0.3: unchanged */
    r = vkattn_reference_softmax(&sp, NULL, x, NULL, NULL, NULL, y);
    r = vkattn_reference_sdpa(&p, &types, x, x, x, NULL, NULL, NULL, y, NULL);
    r = vkattn_reference_heads_merge(&hp, NULL, x, y);
    r = vkattn_reference_dropout(&dp, NULL, x, y);
    uint64_t n = vkattn_tensor_get_info(t).count * vkattn_tensor_get_info(t).desc.dims[(uint32_t)f(1, 2)];
    vkattn_dtype d = vkattn_tensor_get_info(t).desc.dtype;
    vkattn_tensor *k = vkattn_kv_cache_get_desc(cache).keys;
    r = vkattn_kv_cache_lengths(cache, len, NULL);
    r = vkattn_kv_cache_lengths(cache, NULL, &flag);
    printf("vkattn_softmax_run(ctx)\n"); /* a string: not a call to rewrite */
    return r;
}
