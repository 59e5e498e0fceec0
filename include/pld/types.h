/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * pld — basic types: status codes, data types, enums, tensors.
 *
 * Included by <pld/pld.h>; not meant to be included on its own. */
#ifndef PLD_TYPES_H
#define PLD_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "pld/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ------------------------------------------------------------ */

/** Every host-side call returns one of these. Kernel-side calls return void:
 * an error inside a kernel ends that rank's kernel, aborts the group, and
 * pld_launch() returns the root-cause status. */
typedef enum pld_status {
    PLD_OK = 0,          /**< success */
    PLD_ERR_ARG,         /**< bad argument: shape, dtype, enum, offsets rank, option combination */
    PLD_ERR_BOUNDS,      /**< a region falls outside a tensor, window or tile */
    PLD_ERR_ALIAS,       /**< buffers that must be distinct are the same */
    PLD_ERR_UNSUPPORTED, /**< op / dtype / platform / transport not supported */
    PLD_ERR_NOMEM,       /**< host memory, window memory or UB budget exhausted */
    PLD_ERR_DEADLOCK,    /**< every live rank is blocked; message holds the wait-for report */
    PLD_ERR_TIMEOUT,     /**< one wait exceeded the wait timeout */
    PLD_ERR_PEER,        /**< another rank failed or died; this rank was aborted */
    PLD_ERR_DATA,        /**< a device-data precondition failed (counts, indices) */
    PLD_ERR_RACE,        /**< the race checker found an unordered access */
    PLD_ERR_CHECK,       /**< a kernel reported a failed check with pld_fail() */
    PLD_ERR_SYSTEM,      /**< an OS or MPI call failed */
} pld_status;

/** "PLD_ERR_BOUNDS"; "PLD_ERR_UNKNOWN" for values outside the enum. */
PLD_API const char *pld_status_name(pld_status s);

/* ---- data types -------------------------------------------------------- */

/** FP16 and BF16 are stored as 16-bit patterns and reduced in FP32. */
typedef enum pld_dtype {
    PLD_FP32,  /**< 32-bit IEEE float */
    PLD_FP16,  /**< 16-bit IEEE half, stored as its bit pattern */
    PLD_BF16,  /**< bfloat16, stored as its bit pattern */
    PLD_INT32, /**< 32-bit signed integer */
    PLD_INT16, /**< 16-bit signed integer */
    PLD_INT8,  /**< 8-bit signed integer */
    PLD_UINT8, /**< 8-bit unsigned integer */
    PLD_INT64, /**< 64-bit signed integer */
    PLD_FP64   /**< 64-bit IEEE float */
} pld_dtype;
/** The number of pld_dtype values. */
#define PLD_DTYPE_COUNT 9

/** Element size in bytes; 0 for values outside the enum. */
PLD_API size_t pld_dtype_size(pld_dtype t);
/** "fp32", "bf16", ...; "invalid" for values outside the enum. */
PLD_API const char *pld_dtype_name(pld_dtype t);

/** The reduction of pld_tile_reduce, pld_allreduce and the other reducing calls. */
typedef enum pld_reduce_op {
    PLD_SUM, /**< a + b */
    PLD_MAX, /**< the larger of a and b */
    PLD_MIN, /**< the smaller of a and b */
    PLD_PROD /**< a * b */
} pld_reduce_op;
/** What pld_notify does to the peer's signal cell. */
typedef enum pld_notify_op {
    PLD_NOTIFY_ATOMIC_ADD = 0, /**< add the value atomically */
    PLD_NOTIFY_SET = 1         /**< overwrite the cell with the value */
} pld_notify_op;
/** How pld_wait compares its cell with the expected value (signed). */
typedef enum pld_wait_cmp {
    PLD_WAIT_EQ = 0, /**< until cell == expected */
    PLD_WAIT_GE = 1  /**< until cell >= expected */
} pld_wait_cmp;
/** Whether a remote store or put overwrites the destination or adds to it. */
typedef enum pld_atomic {
    PLD_ATOMIC_NONE = 0, /**< overwrite */
    PLD_ATOMIC_ADD = 1   /**< add elementwise, atomically */
} pld_atomic;

/* ---- tensors ----------------------------------------------------------- */

/** The most dimensions a tensor, window or offsets array has. */
#define PLD_MAX_DIMS 4

/** A plain, rank-local, contiguous row-major array. */
typedef struct pld_tensor {
    void *data;                  /**< first element */
    pld_dtype dtype;             /**< element type */
    int ndim;                    /**< number of dimensions, 1..PLD_MAX_DIMS */
    int64_t shape[PLD_MAX_DIMS]; /**< extents, outermost first */
} pld_tensor;

typedef struct pld_window_buffer pld_window_buffer; /**< opaque symmetric allocation */

/** A DistributedTensor: a typed, shaped view of a window buffer, identical on
 * every rank. Build one with pld_window(). */
typedef struct pld_dtensor {
    pld_window_buffer *buf;      /**< the window buffer it views */
    pld_dtype dtype;             /**< element type */
    int ndim;                    /**< number of dimensions, 1..PLD_MAX_DIMS */
    int64_t shape[PLD_MAX_DIMS]; /**< extents, outermost first */
} pld_dtensor;

typedef struct pld_tile pld_tile;   /**< 2-D rank-local scratch from the UB budget */
typedef struct pld_world pld_world; /**< one program's ranks, transport and profile */
typedef struct pld_ctx pld_ctx;     /**< one rank's view inside a kernel */

/* ---- offsets ----------------------------------------------------------- */

/** @def PLD_IDX(...)
 * Builds an inline offsets/shape array: PLD_IDX(my_rank, 0).
 * Arrays made with PLD_IDX also carry their length, so a call given the wrong
 * number of offsets for a tensor fails with PLD_ERR_ARG instead of reading
 * garbage. Plain `int64_t off[2]` arrays are accepted too (their length is
 * taken to be the tensor's ndim).
 * In C++ the array is a temporary that lives to the end of the full
 * expression (in C, to the end of the block): pass PLD_IDX straight to the
 * call, as every example does, and do not keep the pointer. */
/** What PLD_IDX expands to: returns v and remembers n as its length. */
PLD_API const int64_t *pld_idx_mark(const int64_t *v, int n);
#ifndef __cplusplus
#define PLD_IDX(...)                                                                               \
    pld_idx_mark((const int64_t[]){__VA_ARGS__},                                                   \
                 (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))
#endif

#ifdef __cplusplus
}

/* C++ has no compound literals (g++: "taking address of temporary array"):
 * PLD_IDX there builds an array object holding the values, each converted
 * to int64_t as C would convert it, and marks it as C's PLD_IDX does. */
template <size_t N> struct pld_idx_array {
    int64_t v[N];
    const int64_t *mark() const
    {
        return pld_idx_mark(v, (int)N);
    }
};
template <typename... T> inline pld_idx_array<sizeof...(T)> pld_idx_make(T... x)
{
    return pld_idx_array<sizeof...(T)>{{static_cast<int64_t>(x)...}};
}
#define PLD_IDX(...) (pld_idx_make(__VA_ARGS__).mark())
#endif
#endif /* PLD_TYPES_H */
