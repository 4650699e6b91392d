/* 0.2 calls, as an app wrote them (tests/migrate/check.py; migrate-0.3: keep). */
static vkattn_result f(vkattn_context *ctx, vkattn_mha *mha, vkattn_kv_cache *cache,
                       vkattn_tensor *t, const float *x, float *y)
{
    vkattn_result r = vkattn_softmax_run(ctx, &sp, &sio);
    r = vkattn_mha_prepare(mha,
                           &call, /* a comment, with a comma */ &io);
    r = vkattn_mha_run_cached(mha, &call, &io, cache);
    r = vkattn_gqa_backward_prepare(gqa, &call, &io, &grads, &gw);
    r = vkattn_kv_cache_reset_run(cache, VKATTN_KV_CACHE_ALL);
    r = vkattn_sdpa_record(ctx, cmd, &p, &sio);   /* already 0.3: unchanged */
    r = vkattn_reference_softmax(&sp, x, NULL, NULL, NULL, y);
    r = vkattn_reference_sdpa_typed(&p, &types, x, x, x, NULL, NULL, NULL, y, NULL);
    r = vkattn_reference_heads_split_backward(&hp, x, y);
    r = vkattn_reference_dropout_backward(&dp, x, y);
    uint64_t n = vkattn_tensor_count(t) * vkattn_tensor_dim(t, (uint32_t)f(1, 2));
    vkattn_dtype d = vkattn_tensor_dtype(t);
    vkattn_tensor *k = vkattn_kv_cache_keys(cache);
    r = vkattn_kv_cache_lengths(cache, len);
    r = vkattn_kv_cache_overflowed(cache, &flag);
    printf("vkattn_softmax_run(ctx)\n"); /* a string: not a call to rewrite */
    return r;
}
