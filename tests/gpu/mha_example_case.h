/* "example_mha_cross_vmask" of spec/cases/examples.json, transcribed for
 * tests/gpu/test_mha.c: H 2, key_dim 2, value_dim 3, use_bias, output width =
 * query width 4, key = value, value_mask, scores returned; tolerance atol
 * 1e-5, rtol 1e-4. Values are the JSON's, written as the shortest decimals
 * that round to the same float32. */
#ifndef VKATTN_TEST_MHA_EXAMPLE_CASE_H
#define VKATTN_TEST_MHA_EXAMPLE_CASE_H

/* (Dq 4, H 2, key_dim 2) */
static const float ex_query_kernel[16] = {
    0.19f, -0.94f, 0.09f, 0.8f, -0.21f, -0.23f, 0.32f, 0.17f, 0.74f, 0.11f, -0.25f, -0.72f,
    0.95f, 0.65f, 0.11f, -0.31f,
};
/* (H, key_dim) */
static const float ex_query_bias[4] = {
    -0.73f, 0.6f, 0.58f, -0.44f,
};
/* (Dk 5, H, key_dim) */
static const float ex_key_kernel[20] = {
    -0.31f, -0.21f, 0.79f, -0.44f, -0.18f, -0.46f, 0.28f, -0.8f, 0.96f, 0.24f, 0.37f, -0.63f,
    0.32f, -0.82f, 0.62f, 0.28f, 0.5f, -0.24f, -0.99f, 0.61f,
};
/* (H, key_dim) */
static const float ex_key_bias[4] = {
    0.32f, 0.95f, 0.7f, -0.05f,
};
/* (Dv 5, H, value_dim 3) */
static const float ex_value_kernel[30] = {
    -0.81f, 0.72f, 0.17f, 0.81f, -0.44f, -0.19f, 0.8f, -0.18f, 0.35f, 0.77f, -0.47f, 0.44f,
    -0.58f, -0.07f, 0.8f, 0.05f, -0.63f, 0.24f, 0.47f, -0.35f, -1.0f, 0.32f, -0.67f, -0.57f,
    0.76f, -0.36f, -0.02f, -0.78f, 0.55f, -0.89f,
};
/* (H, value_dim) */
static const float ex_value_bias[6] = {
    -0.87f, 0.38f, -0.7f, -0.08f, -0.27f, -0.87f,
};
/* (H, value_dim, Dout 4) */
static const float ex_output_kernel[24] = {
    -0.87f, -0.52f, 0.18f, 0.82f, 0.21f, 0.19f, 0.52f, -0.94f, -0.02f, 0.25f, -0.26f, 0.36f,
    0.08f, 0.9f, -0.85f, 0.91f, -0.98f, 0.65f, 0.13f, 0.49f, 0.69f, -0.17f, -0.74f, 0.66f,
};
/* (Dout) */
static const float ex_output_bias[4] = {
    -0.38f, 0.04f, 0.92f, -0.81f,
};
/* (B 2, Tq 3, Dq 4) */
static const float ex_query[24] = {
    0.74f, 0.38f, 0.48f, 0.13f, 0.62f, 0.82f, 0.99f, -0.0f, -0.52f, 0.47f, 0.94f, 0.28f, -0.81f,
    0.59f, 0.5f, -0.98f, -0.85f, -0.77f, -0.34f, -0.78f, -0.93f, 0.91f, -0.98f, -0.71f,
};
/* (B, Tv 4, Dv 5); key = value */
static const float ex_value[40] = {
    -0.27f, 0.83f, 0.14f, -0.93f, 0.73f, 0.43f, -0.29f, -0.6f, 0.83f, 0.72f, -0.88f, -0.09f,
    0.93f, 0.45f, 0.08f, -0.75f, 0.63f, -0.16f, -0.26f, 0.32f, 0.76f, 0.61f, -0.58f, 0.07f,
    -0.14f, -0.99f, -0.26f, 0.08f, 0.68f, -0.68f, 0.69f, -0.65f, -0.78f, -0.01f, 0.4f, 0.97f,
    -0.11f, -0.82f, -0.37f, -0.5f,
};
/* (B, Tv) */
static const float ex_value_mask[8] = {
    1.0f, 1.0f, 0.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
};
/* (B, Tq, Dout) */
static const float ex_expected_output[24] = {
    -1.5151142f, -0.26481852f, 2.458779f, -2.1498625f, -1.4578581f, -0.28120896f, 2.3803146f,
    -2.0624797f, -1.3859783f, -0.23610672f, 2.055915f, -1.5968864f, 0.9253471f, 1.1620349f,
    1.5297346f, -3.4855516f, 0.912083f, 1.1492553f, 1.6408622f, -3.642731f, 0.9678098f,
    1.1843837f, 1.6979324f, -3.7904f,
};
/* (B, H, Tq, Tv) */
static const float ex_expected_scores[48] = {
    0.32377326f, 0.3448191f, 0.0f, 0.33140764f, 0.32451665f, 0.3450631f, 0.0f, 0.33042032f,
    0.48365387f, 0.15728578f, 0.0f, 0.35906035f, 0.2905005f, 0.3981559f, 0.0f, 0.31134355f,
    0.3477469f, 0.3232835f, 0.0f, 0.32896963f, 0.5244622f, 0.14065965f, 0.0f, 0.33487818f,
    0.21998386f, 0.07017544f, 0.1962303f, 0.51361036f, 0.18963698f, 0.061457068f, 0.18688396f,
    0.56202203f, 0.19295645f, 0.02750162f, 0.14378244f, 0.6357595f, 0.40364215f, 0.17925034f,
    0.09605776f, 0.32104978f, 0.35879922f, 0.2035455f, 0.133499f, 0.30415627f, 0.3255283f,
    0.22219513f, 0.14231241f, 0.30996415f,
};

#endif
