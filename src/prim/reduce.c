/* SPDX-License-Identifier: Apache-2.0 */
/* Elementwise tile arithmetic: acc = acc op x, or out = l op x. FP16/BF16 computed in FP32.
 * Loops are written per dtype and op so the compiler can vectorise them. */
#include "prim/half.h"
#include "prim/prim.h"

/* out[i] = lhs[i] op rhs[i]; `a` and `b` name the two operands in EXPR. */
#define PLD__REDUCE_LOOP(T, OUT, LHS, RHS, EXPR)                                                   \
    do {                                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            T a = (LHS)[i], b = (RHS)[i];                                                          \
            (OUT)[i] = (EXPR);                                                                     \
        }                                                                                          \
    } while (0)

/* Sums and products of integers wrap: computed in the unsigned type U (no
 * signed overflow). For floating point T, U is T. */
#define PLD__REDUCE_OPS(T, U, OUT, LHS, RHS)                                                       \
    switch (op) {                                                                                  \
    case PLD_SUM:                                                                                  \
        PLD__REDUCE_LOOP(T, OUT, LHS, RHS, (T)((U)a + (U)b));                                      \
        return 1;                                                                                  \
    case PLD_MAX:                                                                                  \
        PLD__REDUCE_LOOP(T, OUT, LHS, RHS, a > b ? a : b);                                         \
        return 1;                                                                                  \
    case PLD_MIN:                                                                                  \
        PLD__REDUCE_LOOP(T, OUT, LHS, RHS, a < b ? a : b);                                         \
        return 1;                                                                                  \
    case PLD_PROD:                                                                                 \
        PLD__REDUCE_LOOP(T, OUT, LHS, RHS, (T)((U)a * (U)b));                                      \
        return 1;                                                                                  \
    }                                                                                              \
    return 0

/* Two functions per type, each with restrict pointers so the compiler can
 * vectorise: NAME (acc = acc op x, in place) and NAME##_into (out = l op x). */
#define PLD__REDUCE_TYPE(NAME, T, U)                                                               \
    static int NAME(T *restrict acc, const T *restrict x, size_t n, pld_reduce_op op)              \
    {                                                                                              \
        PLD__REDUCE_OPS(T, U, acc, acc, x);                                                        \
    }                                                                                              \
    static int NAME##_into(T *restrict out, const T *restrict l, const T *restrict x, size_t n,    \
                           pld_reduce_op op)                                                       \
    {                                                                                              \
        PLD__REDUCE_OPS(T, U, out, l, x);                                                          \
    }

PLD__REDUCE_TYPE(reduce_f32, float, float)
PLD__REDUCE_TYPE(reduce_f64, double, double)
PLD__REDUCE_TYPE(reduce_i32, int32_t, uint32_t)
PLD__REDUCE_TYPE(reduce_i64, int64_t, uint64_t)
PLD__REDUCE_TYPE(reduce_i16, int16_t, uint32_t)
PLD__REDUCE_TYPE(reduce_i8, int8_t, uint32_t)
PLD__REDUCE_TYPE(reduce_u8, uint8_t, uint32_t)

static float apply_f32(float a, float b, pld_reduce_op op)
{
    switch (op) {
    case PLD_SUM:
        return a + b;
    case PLD_MAX:
        return a > b ? a : b;
    case PLD_MIN:
        return a < b ? a : b;
    case PLD_PROD:
        return a * b;
    }
    return a;
}

/* out may be l (in place): element by element, no restrict. */
static int reduce_half(uint16_t *out, const uint16_t *l, const uint16_t *x, size_t n,
                       pld_reduce_op op, int bf16)
{
    for (size_t i = 0; i < n; i++) {
        float a = bf16 ? pld__bf16_to_f32(l[i]) : pld__fp16_to_f32(l[i]);
        float b = bf16 ? pld__bf16_to_f32(x[i]) : pld__fp16_to_f32(x[i]);
        float r = apply_f32(a, b, op);
        out[i] = bf16 ? pld__f32_to_bf16(r) : pld__f32_to_fp16(r);
    }
    return 1;
}

int pld__reduce_buf(void *acc, const void *x, size_t n, pld_dtype dtype, pld_reduce_op op)
{
    switch (dtype) {
    case PLD_FP32:
        return reduce_f32(acc, x, n, op);
    case PLD_FP64:
        return reduce_f64(acc, x, n, op);
    case PLD_FP16:
        return reduce_half(acc, acc, x, n, op, 0);
    case PLD_BF16:
        return reduce_half(acc, acc, x, n, op, 1);
    case PLD_INT32:
        return reduce_i32(acc, x, n, op);
    case PLD_INT64:
        return reduce_i64(acc, x, n, op);
    case PLD_INT16:
        return reduce_i16(acc, x, n, op);
    case PLD_INT8:
        return reduce_i8(acc, x, n, op);
    case PLD_UINT8:
        return reduce_u8(acc, x, n, op);
    }
    return 0;
}

int pld__reduce3_buf(void *out, const void *l, const void *x, size_t n, pld_dtype dtype,
                     pld_reduce_op op)
{
    switch (dtype) {
    case PLD_FP32:
        return reduce_f32_into(out, l, x, n, op);
    case PLD_FP64:
        return reduce_f64_into(out, l, x, n, op);
    case PLD_FP16:
        return reduce_half(out, l, x, n, op, 0);
    case PLD_BF16:
        return reduce_half(out, l, x, n, op, 1);
    case PLD_INT32:
        return reduce_i32_into(out, l, x, n, op);
    case PLD_INT64:
        return reduce_i64_into(out, l, x, n, op);
    case PLD_INT16:
        return reduce_i16_into(out, l, x, n, op);
    case PLD_INT8:
        return reduce_i8_into(out, l, x, n, op);
    case PLD_UINT8:
        return reduce_u8_into(out, l, x, n, op);
    }
    return 0;
}

static void check_pair(pld_ctx *c, const char *api, const pld_tile *acc, const pld_tile *x)
{
    pld__check_tile(c, api, "acc", acc);
    pld__check_tile(c, api, "x", x);
    if (acc->dtype != x->dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "acc t%d is %s but x t%d is %s", acc->id,
                    pld_dtype_name(acc->dtype), x->id, pld_dtype_name(x->dtype));
    if (acc->rows != x->rows || acc->cols != x->cols)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "acc t%d [%lld,%lld] and x t%d [%lld,%lld] differ in shape", acc->id,
                    (long long)acc->rows, (long long)acc->cols, x->id, (long long)x->rows,
                    (long long)x->cols);
}

void pld_tile_reduce(pld_ctx *c, pld_tile *acc, const pld_tile *x, pld_reduce_op op)
{
    PLD__CTX_CHECK(c, "pld_tile_reduce");
    static const char api[] = "pld_tile_reduce";
    static const char *const names[] = {"sum", "max", "min", "prod"};
    pld__check_live(c);
    check_pair(c, api, acc, x);
    if ((unsigned)op > PLD_PROD)
        pld__kraise(c, PLD_ERR_ARG, api, "op %d is not a pld_reduce_op (Sum, Max, Min, Prod)",
                    (int)op);
    size_t n = (size_t)(acc->rows * acc->cols);
    if (acc == x)
        pld__kraise(c, PLD_ERR_ALIAS, api, "acc and x are the same tile t%d", acc->id);
    pld__reduce_buf(acc->data, x->data, n, acc->dtype, op);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.reduce t%d %s= t%d", acc->id, names[op], x->id);
}

void pld_tile_mul(pld_ctx *c, pld_tile *acc, const pld_tile *x)
{
    PLD__CTX_CHECK(c, "pld_tile_mul");
    static const char api[] = "pld_tile_mul";
    pld__check_live(c);
    check_pair(c, api, acc, x);
    if (acc == x)
        pld__kraise(c, PLD_ERR_ALIAS, api, "acc and x are the same tile t%d", acc->id);
    pld__reduce_buf(acc->data, x->data, (size_t)(acc->rows * acc->cols), acc->dtype, PLD_PROD);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.mul t%d *= t%d", acc->id, x->id);
}
