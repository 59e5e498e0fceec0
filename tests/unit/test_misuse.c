/* SPDX-License-Identifier: Apache-2.0 */
/* Host-side misuse that used to end in an overflow, a wrapped value or an
 * empty message: each is a clear status naming the call and the values. */
#include "test_util.h"

Test(misuse, view_whose_element_count_overflows, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "tiny", &buf), PLD_OK);
    pld_dtensor t;
    /* 2^32 x 2^32 fp32: each extent is allowed, their product is not */
    const int64_t big = (int64_t)1 << 32;
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, (const int64_t[]){big, big}, &t), PLD_ERR_BOUNDS);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window: view fp32 [4294967296,4294967296]");
    TU_EXPECT_CONTAINS(pld_world_error(w), "more than 2^40 elements");
    TU_EXPECT_CONTAINS(pld_world_error(w), "'tiny' has 64 bytes");
    /* four extents of 2^16: 2^64 elements, the product would wrap to 0 */
    const int64_t k = (int64_t)1 << 16;
    TU_ASSERT_STATUS(pld_window(buf, PLD_UINT8, 4, (const int64_t[]){k, k, k, k}, &t),
                     PLD_ERR_BOUNDS);
    TU_EXPECT_CONTAINS(pld_world_error(w), "more than 2^40 elements");
    pld_world_finalize(w);
}

Test(misuse, view_with_null_shape_names_it, .timeout = 30)
{
    pld_world *w = tu_world(NULL);
    pld_window_buffer *buf = NULL;
    TU_ASSERT_STATUS(pld_alloc_window_buffer(w, 64, "data", &buf), PLD_OK);
    pld_dtensor t;
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 2, NULL, &t), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window: 'data': shape is NULL");
    TU_ASSERT_STATUS(pld_window(buf, PLD_FP32, 1, (const int64_t[]){4}, NULL), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_window: 'data': out is NULL");
    pld_world_finalize(w);
}

static void expect_bad_devices(const char *devices, const char *words)
{
    pld_config cfg = {.devices = devices};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    cr_expect_eq(st, PLD_ERR_ARG, "devices '%s': %s, expected PLD_ERR_ARG", devices,
                 pld_status_name(st));
    if (st == PLD_OK) {
        pld_world_finalize(w);
        return;
    }
    TU_EXPECT_CONTAINS(pld_last_error(), words);
}

Test(misuse, device_ids_out_of_range_are_not_wrapped, .timeout = 30)
{
    expect_bad_devices("99999999999", "device '99999999999' in '99999999999' is out of range");
    expect_bad_devices("2147483648", "device '2147483648' in '2147483648' is out of range");
    /* 2^32 + 1 used to wrap to 1 and read as a duplicate of the next id */
    expect_bad_devices("4294967297,1", "device '4294967297' in '4294967297,1' is out of range");
    expect_bad_devices("0-99999999999", "is out of range: ids are 0..2147483647");
}

Test(misuse, counters_of_a_rank_outside_the_world, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    pld_counters k;
    TU_ASSERT_STATUS(pld_rank_counters(w, 9, &k), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w),
                       "pld_rank_counters: rank 9 is not a rank of this world [0,2)");
    TU_ASSERT_STATUS(pld_rank_counters(w, -1, &k), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "rank -1 is not a rank of this world");
    TU_ASSERT_STATUS(pld_rank_counters(w, 0, NULL), PLD_ERR_ARG);
    TU_EXPECT_CONTAINS(pld_world_error(w), "pld_rank_counters: out is NULL");
    pld_world_finalize(w);
}

/* A 2-D tile moved to or from a 1-D tensor or window: both regions get the
 * same rank (the tensor's used to keep an unset second dimension). */
static void tile_meets_1d(pld_ctx *c, void *arg)
{
    pld_dtensor *line = arg;
    float src[8];
    for (int i = 0; i < 8; i++)
        src[i] = (float)(10 * pld_rank(c) + i);
    pld_tensor plain = pld_tensor_make(src, PLD_FP32, 1, PLD_IDX(8));
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 4);
    pld_load(c, t, plain, PLD_IDX(2));
    const float *v = pld_tile_data(t);
    KCHECK(c, v[0] == src[2] && v[3] == src[5], "loaded %g..%g", v[0], v[3]);
    int peer = 1 - pld_rank(c);
    pld_remote_store(c, t, *line, peer, PLD_IDX(4), PLD_ATOMIC_NONE);
    pld_tile *back = pld_tile_create(c, PLD_FP32, 1, 2);
    pld_remote_load(c, back, *line, peer, PLD_IDX(5));
    float out[8] = {0};
    pld_store(c, back, pld_tensor_make(out, PLD_FP32, 1, PLD_IDX(8)), PLD_IDX(6));
    KCHECK(c, out[6] == src[3] && out[7] == src[4] && out[5] == 0.0f, "stored %g %g %g", out[5],
           out[6], out[7]);
}

Test(misuse, tiles_move_to_and_from_1d_tensors_and_windows, .timeout = 30)
{
    pld_world *w = tu_world("0,1");
    pld_dtensor *line = tu_host_alloc(w, sizeof *line);
    *line = tu_window(w, "line", PLD_FP32, 1, PLD_IDX(8));
    TU_LAUNCH_OK(w, tile_meets_1d, line);
    pld_world_finalize(w);
}

Test(misuse, element_count_of_a_huge_shape_does_not_overflow, .timeout = 30)
{
    const int64_t big = ((int64_t)1 << 32) + 1;
    cr_expect_eq(pld_tensor_numel(pld_tensor_make(NULL, PLD_FP32, 2, PLD_IDX(big, big))), -1);
    cr_expect_eq(pld_tensor_numel(pld_tensor_make(NULL, PLD_FP32, 2, PLD_IDX(3, 5))), 15);
}
