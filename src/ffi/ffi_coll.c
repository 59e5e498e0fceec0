/* SPDX-License-Identifier: Apache-2.0 */
/* pld/ffi.h: the builtins, each guarded. */
#include "ffi/ffi_guard.h"

pld_status pld_ffi_barrier(pld_ctx *c, const pld_dtensor *signal)
{
    PLD__FFI_RUN(c, pld_barrier(c, *signal));
}

pld_status pld_ffi_broadcast(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                             int root)
{
    PLD__FFI_RUN(c, pld_broadcast(c, *data, *signal, root));
}

pld_status pld_ffi_broadcast_with(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                                  int root, pld_broadcast_mode mode)
{
    PLD__FFI_RUN(c, pld_broadcast_with(c, *data, *signal, root, mode));
}

pld_status pld_ffi_allgather(pld_ctx *c, const pld_tensor *local, const pld_dtensor *target,
                             const pld_dtensor *signal)
{
    PLD__FFI_RUN(c, pld_allgather(c, *local, *target, *signal));
}

pld_status pld_ffi_allgather_with(pld_ctx *c, const pld_tensor *local, const pld_dtensor *target,
                                  const pld_dtensor *signal, pld_allgather_mode mode)
{
    PLD__FFI_RUN(c, pld_allgather_with(c, *local, *target, *signal, mode));
}

pld_status pld_ffi_all_to_all_with(pld_ctx *c, const pld_tensor *input, const pld_dtensor *target,
                                   const pld_dtensor *signal, pld_all_to_all_mode mode)
{
    PLD__FFI_RUN(c, pld_all_to_all_with(c, *input, *target, *signal, mode));
}

pld_status pld_ffi_allgather_inplace(pld_ctx *c, const pld_dtensor *target,
                                     const pld_dtensor *signal)
{
    PLD__FFI_RUN(c, pld_allgather_inplace(c, *target, *signal));
}

pld_status pld_ffi_reduce_scatter(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                                  pld_reduce_op op)
{
    PLD__FFI_RUN(c, pld_reduce_scatter(c, *data, *signal, op));
}

pld_status pld_ffi_allreduce(pld_ctx *c, const pld_dtensor *data, const pld_dtensor *signal,
                             pld_reduce_op op, pld_allreduce_mode mode, int core_num)
{
    PLD__FFI_RUN(c, pld_allreduce_cores(c, *data, *signal, op, mode, core_num));
}

pld_status pld_ffi_all_to_all(pld_ctx *c, const pld_tensor *input, const pld_dtensor *target,
                              const pld_dtensor *signal)
{
    PLD__FFI_RUN(c, pld_all_to_all(c, *input, *target, *signal));
}

pld_status pld_ffi_all_to_all_v(pld_ctx *c, const pld_tensor *input, const pld_dtensor *target,
                                const pld_dtensor *signal, const pld_tensor *send_counts,
                                const pld_dtensor *recv_counts)
{
    PLD__FFI_RUN(c, pld_all_to_all_v(c, *input, *target, *signal, *send_counts, *recv_counts));
}

pld_status pld_ffi_indexed_all_to_all_v(pld_ctx *c, const pld_tensor *input,
                                        const pld_dtensor *target, const pld_dtensor *signal,
                                        const pld_dtensor *send_counts,
                                        const pld_tensor *recv_counts, const pld_tensor *index,
                                        int core_num)
{
    PLD__FFI_RUN(c, pld_indexed_all_to_all_v(c, *input, *target, *signal, *send_counts,
                                             *recv_counts, *index, core_num));
}

pld_status pld_ffi_indexed_combine(pld_ctx *c, const pld_dtensor *expert_out,
                                   const pld_tensor *output, const pld_dtensor *signal,
                                   const pld_dtensor *send_counts, const pld_tensor *index,
                                   const pld_tensor *weights, int core_num)
{
    PLD__FFI_RUN(c, pld_indexed_combine(c, *expert_out, *output, *signal, *send_counts, *index,
                                        *weights, core_num));
}

pld_status pld_ffi_moe_dispatch(pld_ctx *c, const pld_moe_layout *l, const pld_tensor *input,
                                const pld_dtensor *target, const pld_dtensor *signal,
                                const pld_tensor *send_counts, const pld_dtensor *recv_counts,
                                const pld_tensor *expert_offsets)
{
    PLD__FFI_RUN(c, pld_moe_dispatch(c, l, *input, *target, *signal, *send_counts, *recv_counts,
                                     *expert_offsets));
}

pld_status pld_ffi_moe_combine(pld_ctx *c, const pld_moe_layout *l, const pld_dtensor *expert_out,
                               const pld_dtensor *out, const pld_dtensor *signal,
                               const pld_tensor *send_counts, const pld_dtensor *recv_counts)
{
    PLD__FFI_RUN(c, pld_moe_combine(c, l, *expert_out, *out, *signal, *send_counts, *recv_counts));
}
