/* Elementwise tile arithmetic: acc = acc op x. FP16/BF16 computed in FP32.
 * Loops are written per dtype and op so the compiler can vectorise them. */
#include "prim/half.h"
#include "prim/prim.h"

#define PLD__REDUCE_LOOP(T, EXPR)                                                                  \
    do {                                                                                           \
        T *restrict a_ = (T *)acc;                                                                 \
        const T *restrict x_ = (const T *)x;                                                       \
        for (size_t i = 0; i < n; i++) {                                                           \
            T a = a_[i], b = x_[i];                                                                \
            a_[i] = (EXPR);                                                                        \
        }                                                                                          \
    } while (0)

#define PLD__REDUCE_OPS(T)                                                                         \
    switch (op) {                                                                                  \
    case PLD_SUM:                                                                                  \
        PLD__REDUCE_LOOP(T, a + b);                                                                \
        return 1;                                                                                  \
    case PLD_MAX:                                                                                  \
        PLD__REDUCE_LOOP(T, a > b ? a : b);                                                        \
        return 1;                                                                                  \
    case PLD_MIN:                                                                                  \
        PLD__REDUCE_LOOP(T, a < b ? a : b);                                                        \
        return 1;                                                                                  \
    case PLD_PROD:                                                                                 \
        PLD__REDUCE_LOOP(T, a *b);                                                                 \
        return 1;                                                                                  \
    }                                                                                              \
    return 0

static int reduce_f32(float *restrict acc, const float *restrict x, size_t n, pld_reduce_op op)
{
    PLD__REDUCE_OPS(float);
}

static int reduce_f64(double *restrict acc, const double *restrict x, size_t n, pld_reduce_op op)
{
    PLD__REDUCE_OPS(double);
}

/* Integer sums and products wrap (computed unsigned: no signed overflow). */
#define PLD__REDUCE_INT(NAME, T, U)                                                                \
    static int NAME(T *restrict acc, const T *restrict x, size_t n, pld_reduce_op op)              \
    {                                                                                              \
        switch (op) {                                                                              \
        case PLD_SUM:                                                                              \
            PLD__REDUCE_LOOP(T, (T)((U)a + (U)b));                                                 \
            return 1;                                                                              \
        case PLD_PROD:                                                                             \
            PLD__REDUCE_LOOP(T, (T)((U)a * (U)b));                                                 \
            return 1;                                                                              \
        case PLD_MAX:                                                                              \
            PLD__REDUCE_LOOP(T, a > b ? a : b);                                                    \
            return 1;                                                                              \
        case PLD_MIN:                                                                              \
            PLD__REDUCE_LOOP(T, a < b ? a : b);                                                    \
            return 1;                                                                              \
        }                                                                                          \
        return 0;                                                                                  \
    }

PLD__REDUCE_INT(reduce_i32, int32_t, uint32_t)
PLD__REDUCE_INT(reduce_i64, int64_t, uint64_t)
PLD__REDUCE_INT(reduce_i16, int16_t, uint32_t)
PLD__REDUCE_INT(reduce_i8, int8_t, uint32_t)
PLD__REDUCE_INT(reduce_u8, uint8_t, uint32_t)

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

static int reduce_half(uint16_t *restrict acc, const uint16_t *restrict x, size_t n,
                       pld_reduce_op op, int bf16)
{
    for (size_t i = 0; i < n; i++) {
        float a = bf16 ? pld__bf16_to_f32(acc[i]) : pld__fp16_to_f32(acc[i]);
        float b = bf16 ? pld__bf16_to_f32(x[i]) : pld__fp16_to_f32(x[i]);
        float r = apply_f32(a, b, op);
        acc[i] = bf16 ? pld__f32_to_bf16(r) : pld__f32_to_fp16(r);
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
        return reduce_half(acc, x, n, op, 0);
    case PLD_BF16:
        return reduce_half(acc, x, n, op, 1);
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

static void check_pair(pld_ctx *c, const char *api, const pld_tile *acc, const pld_tile *x)
{
    if (!acc || !x)
        pld__kraise(c, PLD_ERR_ARG, api, "tile is NULL");
    if (acc->dtype != x->dtype)
        pld__kraise(c, PLD_ERR_ARG, api, "acc t%d is %s but x t%d is %s", acc->id,
                    pld_dtype_name(acc->dtype), x->id, pld_dtype_name(x->dtype));
    if (acc->rows != x->rows || acc->cols != x->cols)
        pld__kraise(c, PLD_ERR_ARG, api, "acc t%d [%lld,%lld] and x t%d [%lld,%lld] differ in shape",
                    acc->id, (long long)acc->rows, (long long)acc->cols, x->id,
                    (long long)x->rows, (long long)x->cols);
}

void pld_tile_reduce(pld_ctx *c, pld_tile *acc, const pld_tile *x, pld_reduce_op op)
{
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
    static const char api[] = "pld_tile_mul";
    pld__check_live(c);
    check_pair(c, api, acc, x);
    if (acc == x)
        pld__kraise(c, PLD_ERR_ALIAS, api, "acc and x are the same tile t%d", acc->id);
    pld__reduce_buf(acc->data, x->data, (size_t)(acc->rows * acc->cols), acc->dtype, PLD_PROD);
    if (c->ir)
        pld__ir_emit(c->ir, c->depth, "tile.mul t%d *= t%d", acc->id, x->id);
}
