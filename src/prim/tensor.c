/* SPDX-License-Identifier: Apache-2.0 */
/* Plain tensors and a rank's own slice of a window. */
#include <string.h>

#include "prim/prim.h"

pld_tensor pld_tensor_make(void *data, pld_dtype dtype, int ndim, const int64_t *shape)
{
    pld_tensor t = {.data = data, .dtype = dtype, .ndim = ndim};
    /* The PLD_IDX mark is consumed here, so it can never be paired later
     * with another array at the same address. A shape shorter than ndim
     * leaves zero extents, and an invalid ndim is kept as is: the first call
     * that uses the tensor reports either with the call's name. */
    int n = pld__idx_count(shape);
    if (shape && ndim >= 1 && ndim <= PLD_MAX_DIMS)
        memcpy(t.shape, shape, sizeof(int64_t) * (size_t)(n >= 0 && n < ndim ? n : ndim));
    return t;
}

int64_t pld_tensor_numel(pld_tensor t)
{
    int64_t n = 1;
    for (int i = 0; i < t.ndim && i < PLD_MAX_DIMS; i++)
        if (__builtin_mul_overflow(n, t.shape[i], &n))
            return -1; /* no element count fits: callers report the shape */
    return n;
}

pld_tensor pld_local(const pld_ctx *c, pld_dtensor t)
{
    PLD__CTX_CHECK(c, "pld_local");
    pld_ctx *mc = (pld_ctx *)c; /* errors end the kernel: the context is not const then */
    pld__check_live(mc);
    pld__check_dtensor(mc, "pld_local", "window", t);
    void *p = c->tp->window_peer_ptr(c->w, t.buf, c->wrank);
    return pld_tensor_make(p, t.dtype, t.ndim, t.shape);
}
