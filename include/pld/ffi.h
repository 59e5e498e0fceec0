/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * Kernel calls for other languages: each returns a status instead of
 * leaving the kernel.
 *
 * A C kernel that hits an error (a region outside its window, a peer that
 * failed) does not return from the call: the library unwinds to the end of
 * the kernel. A kernel written in another language (the Python package in
 * python/) cannot be unwound through its interpreter, so it calls these
 * instead. Each runs the C call of the same name and, on an error, returns
 * its status with the group already failed (the message is the world's:
 * pld_ffi_error); the caller then returns from its kernel. After an error
 * every later call returns PLD_ERR_PEER or the error at once.
 *
 * Offsets and shapes are arrays of the tensor's ndim (NULL: the whole
 * tensor, as a NULL pld_xfer). Tensors and tiles are passed by pointer. */
#ifndef PLD_FFI_H
#define PLD_FFI_H

#include "pld/coll.h"
#include "pld/pld.h"
#include "pld/team.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The group's failure message ("" while none), for the status a call returned. */
PLD_API const char *pld_ffi_error(pld_ctx *c);
/** Fails the group with PLD_ERR_CHECK and msg, like pld_fail, and returns
 * PLD_ERR_CHECK instead of leaving the kernel. */
PLD_API pld_status pld_ffi_fail(pld_ctx *c, const char *msg);
/** Fails the group with status st and "api: msg" (naming this rank), as
 * the library's own checks do, and returns st: for checks a binding makes
 * before it calls the library (an offsets list of the wrong length). */
PLD_API pld_status pld_ffi_raise(pld_ctx *c, pld_status st, const char *api, const char *msg);
/** This rank's context in team t (pld_team_ctx) into *out. */
PLD_API pld_status pld_ffi_team_ctx(pld_ctx *c, const pld_team *t, pld_ctx **out);

/* ---- primitives ------------------------------------------------------- */
/** pld_notify. */
PLD_API pld_status pld_ffi_notify(pld_ctx *c, const pld_dtensor *signal, int peer,
                                  const int64_t *offsets, int32_t value, pld_notify_op op);
/** pld_wait. */
PLD_API pld_status pld_ffi_wait(pld_ctx *c, const pld_dtensor *signal, const int64_t *offsets,
                                int32_t expected, pld_wait_cmp cmp);
/** pld_signal_read, the value into *out. */
PLD_API pld_status pld_ffi_signal_read(pld_ctx *c, const pld_dtensor *signal,
                                       const int64_t *offsets, int32_t *out);
/** pld_remote_load into a [rows, cols] tile of src's dtype (from the UB
 * budget, as in C), copied out to dst (rows x cols elements). */
PLD_API pld_status pld_ffi_remote_load(pld_ctx *c, void *dst, int64_t rows, int64_t cols,
                                       const pld_dtensor *src, int peer, const int64_t *offsets);
/** pld_remote_store of the [rows, cols] elements at src, through a tile. */
PLD_API pld_status pld_ffi_remote_store(pld_ctx *c, const void *src, int64_t rows, int64_t cols,
                                        const pld_dtensor *dst, int peer, const int64_t *offsets,
                                        pld_atomic atomic);
/** pld_put / pld_get with the region (dst_offsets, src_offsets, shape), or
 * all three NULL for the whole tensor. */
PLD_API pld_status pld_ffi_put(pld_ctx *c, const pld_dtensor *dst, int peer, const pld_tensor *src,
                               const int64_t *dst_offsets, const int64_t *src_offsets,
                               const int64_t *shape, pld_atomic atomic);
/** pld_get, as pld_ffi_put. */
PLD_API pld_status pld_ffi_get(pld_ctx *c, const pld_tensor *dst, int peer, const pld_dtensor *src,
                               const int64_t *dst_offsets, const int64_t *src_offsets,
                               const int64_t *shape);

/* ---- builtins (pld/coll.h) ------------------------------------------- */
/** pld_barrier. */
PLD_API pld_status pld_ffi_barrier(pld_ctx *c, const pld_dtensor *signal);
/** pld_broadcast. */
PLD_API pld_status pld_ffi_broadcast(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                                     int root);
/** pld_broadcast_with. */
PLD_API pld_status pld_ffi_broadcast_with(pld_ctx *c, const pld_dtensor *data,
                                          const pld_dtensor *signal, int root,
                                          pld_broadcast_mode mode);
/** pld_allgather. */
PLD_API pld_status pld_ffi_allgather(pld_ctx *c, const pld_tensor *local, const pld_dtensor *target,
                                     const pld_dtensor *signal);
/** pld_allgather_with. */
PLD_API pld_status pld_ffi_allgather_with(pld_ctx *c, const pld_tensor *local,
                                          const pld_dtensor *target, const pld_dtensor *signal,
                                          pld_allgather_mode mode);
/** pld_allgather_inplace. */
PLD_API pld_status pld_ffi_allgather_inplace(pld_ctx *c, const pld_dtensor *target,
                                             const pld_dtensor *signal);
/** pld_reduce_scatter. */
PLD_API pld_status pld_ffi_reduce_scatter(pld_ctx *c, const pld_dtensor *data,
                                          const pld_dtensor *signal, pld_reduce_op op);
/** pld_allreduce_cores (core_num 1: pld_allreduce). */
PLD_API pld_status pld_ffi_allreduce(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                                     pld_reduce_op op, pld_allreduce_mode mode, int core_num);
/** pld_all_to_all. */
PLD_API pld_status pld_ffi_all_to_all(pld_ctx *c, const pld_tensor *input,
                                      const pld_dtensor *target, const pld_dtensor *signal);
/** pld_all_to_all_with. */
PLD_API pld_status pld_ffi_all_to_all_with(pld_ctx *c, const pld_tensor *input,
                                           const pld_dtensor *target, const pld_dtensor *signal,
                                           pld_all_to_all_mode mode);
/** pld_all_to_all_v. */
PLD_API pld_status pld_ffi_all_to_all_v(pld_ctx *c, const pld_tensor *input,
                                        const pld_dtensor *target, const pld_dtensor *signal,
                                        const pld_tensor *send_counts,
                                        const pld_dtensor *recv_counts);
/** pld_indexed_all_to_all_v. */
PLD_API pld_status pld_ffi_indexed_all_to_all_v(pld_ctx *c, const pld_tensor *input,
                                                const pld_dtensor *target,
                                                const pld_dtensor *signal,
                                                const pld_dtensor *send_counts,
                                                const pld_tensor *recv_counts,
                                                const pld_tensor *index, int core_num);
/** pld_indexed_combine. */
PLD_API pld_status pld_ffi_indexed_combine(pld_ctx *c, const pld_dtensor *expert_out,
                                           const pld_tensor *output, const pld_dtensor *signal,
                                           const pld_dtensor *send_counts, const pld_tensor *index,
                                           const pld_tensor *weights, int core_num);
/** pld_moe_dispatch. */
PLD_API pld_status pld_ffi_moe_dispatch(pld_ctx *c, const pld_moe_layout *l,
                                        const pld_tensor *input, const pld_dtensor *target,
                                        const pld_dtensor *signal, const pld_tensor *send_counts,
                                        const pld_dtensor *recv_counts,
                                        const pld_tensor *expert_offsets);
/** pld_moe_combine. */
PLD_API pld_status pld_ffi_moe_combine(pld_ctx *c, const pld_moe_layout *l,
                                       const pld_dtensor *expert_out, const pld_dtensor *out,
                                       const pld_dtensor *signal, const pld_tensor *send_counts,
                                       const pld_dtensor *recv_counts);

#ifdef __cplusplus
}
#endif

#endif
