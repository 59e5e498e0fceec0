/* SPDX-License-Identifier: Apache-2.0 */
/* Host-side twins of the builtins: launch the builtin on every rank.
 * Data arguments are windows; a rank's plain-tensor input is its own slice. */
#include "core/handles.h"
#include "core/internal.h"

typedef struct host_arg {
    pld_dtensor a, b, sig, d, e;
    int root;
    pld_reduce_op op;
    pld_allreduce_mode mode;
} host_arg;

/* The argument block goes to shared memory: on the process transport the
 * ranks cannot see the host's stack. */
static pld_status launch_twin(pld_world *w, pld_kernel k, const host_arg *a)
{
    host_arg *shared = pld_host_alloc(w, sizeof *shared);
    if (!shared)
        return pld__world_fail(w, PLD_ERR_NOMEM, "out of host-shared memory");
    *shared = *a;
    pld_status st = pld_launch(w, k, shared);
    pld_host_free(w, shared);
    return st;
}

static pld_status need_signal(pld_world *w, const char *api, const pld_dtensor *signal)
{
    pld_status st = pld__world_check(w, api);
    if (st != PLD_OK)
        return st;
    if (!signal)
        return pld__world_fail(w, PLD_ERR_ARG, "%s: signal is NULL", api);
    return PLD_OK;
}

static void barrier_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_barrier(c, a->sig);
}

pld_status pld_host_barrier(pld_world *w, const pld_dtensor *signal)
{
    pld_status st = need_signal(w, "pld_host_barrier", signal);
    if (st != PLD_OK)
        return st;
    host_arg a = {.sig = *signal};
    return launch_twin(w, barrier_kernel, &a);
}

static void broadcast_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_broadcast(c, a->a, a->sig, a->root);
}

pld_status pld_host_broadcast(pld_world *w, pld_dtensor data, const pld_dtensor *signal, int root)
{
    pld_status st = need_signal(w, "pld_host_broadcast", signal);
    if (st != PLD_OK)
        return st;
    host_arg a = {.a = data, .sig = *signal, .root = root};
    return launch_twin(w, broadcast_kernel, &a);
}

static void allgather_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_allgather(c, pld_local(c, a->a), a->b, a->sig);
}

pld_status pld_host_allgather(pld_world *w, pld_dtensor stage, pld_dtensor target,
                              const pld_dtensor *signal)
{
    pld_status st = need_signal(w, "pld_host_allgather", signal);
    if (st != PLD_OK)
        return st;
    if (stage.buf && stage.buf == target.buf)
        return pld__world_fail(w, PLD_ERR_ALIAS,
                               "pld_host_allgather: stage and target are the same window '%s'",
                               target.buf->name);
    host_arg a = {.a = stage, .b = target, .sig = *signal};
    return launch_twin(w, allgather_kernel, &a);
}

static void reduce_scatter_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_reduce_scatter(c, a->a, a->sig, a->op);
}

pld_status pld_host_reduce_scatter(pld_world *w, pld_dtensor data, const pld_dtensor *signal,
                                   pld_reduce_op op)
{
    pld_status st = need_signal(w, "pld_host_reduce_scatter", signal);
    if (st != PLD_OK)
        return st;
    host_arg a = {.a = data, .sig = *signal, .op = op};
    return launch_twin(w, reduce_scatter_kernel, &a);
}

static void allreduce_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_allreduce_cores(c, a->a, a->sig, a->op, a->mode, a->root);
}

/* The signal pld_host_allreduce uses when given NULL, allocated once per
 * world: big enough for the ring ([2(P-1), P]) and for the mesh on every
 * core ([P, AIV cores]). */
static pld_status private_signal(pld_world *w, pld_allreduce_mode mode, int core_num,
                                 pld_dtensor *out)
{
    int p = w->nranks, lanes = w->profile.aiv_cores;
    int64_t ring = 2 * (int64_t)(p - 1) * p, mesh = (int64_t)p * lanes;
    if (!w->private_signal) {
        pld_status st =
            pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)(ring > mesh ? ring : mesh),
                                    "pld.allreduce.signal", &w->private_signal);
        if (st != PLD_OK)
            return st;
    }
    int64_t shape[2] = {mode == PLD_RING ? 2 * (p - 1) : p, mode == PLD_RING ? p : core_num};
    if (shape[0] < 1)
        shape[0] = 1;
    return pld_window(w->private_signal, PLD_INT32, 2, shape, out);
}

pld_status pld_host_allreduce(pld_world *w, pld_dtensor data, const pld_dtensor *signal,
                              pld_reduce_op op, pld_allreduce_mode mode, int core_num)
{
    pld_status st = pld__world_check(w, "pld_host_allreduce");
    if (st != PLD_OK)
        return st;
    if (core_num < 1 || core_num > w->profile.aiv_cores)
        return pld__world_fail(w, PLD_ERR_ARG,
                               "pld_host_allreduce: core_num %d not in [1, %d] (AIV cores of %s)",
                               core_num, w->profile.aiv_cores, w->profile.name);
    host_arg a = {.a = data, .op = op, .mode = mode, .root = core_num};
    if (signal) {
        a.sig = *signal;
    } else if ((st = private_signal(w, mode, core_num, &a.sig)) != PLD_OK) {
        return st;
    }
    return launch_twin(w, allreduce_kernel, &a);
}

static void all_to_all_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_all_to_all(c, pld_local(c, a->a), a->b, a->sig);
}

pld_status pld_host_all_to_all(pld_world *w, pld_dtensor input, pld_dtensor target,
                               const pld_dtensor *signal)
{
    pld_status st = need_signal(w, "pld_host_all_to_all", signal);
    if (st != PLD_OK)
        return st;
    host_arg a = {.a = input, .b = target, .sig = *signal};
    return launch_twin(w, all_to_all_kernel, &a);
}

static void all_to_all_v_kernel(pld_ctx *c, void *arg)
{
    host_arg *a = arg;
    pld_all_to_all_v(c, pld_local(c, a->a), a->b, a->sig, pld_local(c, a->d), a->e);
}

pld_status pld_host_all_to_all_v(pld_world *w, pld_dtensor input, pld_dtensor target,
                                 const pld_dtensor *signal, pld_dtensor send_counts,
                                 pld_dtensor recv_counts)
{
    pld_status st = need_signal(w, "pld_host_all_to_all_v", signal);
    if (st != PLD_OK)
        return st;
    host_arg a = {.a = input, .b = target, .sig = *signal, .d = send_counts, .e = recv_counts};
    return launch_twin(w, all_to_all_v_kernel, &a);
}
