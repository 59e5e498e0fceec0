/* Host-side twins of the builtins: launch the builtin on every rank. */
#include "core/internal.h"

typedef struct host_sig_arg {
    pld_dtensor signal;
} host_sig_arg;

static void barrier_kernel(pld_ctx *c, void *arg)
{
    host_sig_arg *a = arg;
    pld_barrier(c, a->signal);
}

pld_status pld_host_barrier(pld_world *w, const pld_dtensor *signal)
{
    if (!w)
        return PLD_ERR_ARG;
    if (!signal)
        return pld__world_fail(w, PLD_ERR_ARG, "pld_host_barrier: signal is NULL");
    host_sig_arg a = {.signal = *signal};
    return pld_launch(w, barrier_kernel, &a);
}
