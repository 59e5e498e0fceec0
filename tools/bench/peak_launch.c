/* SPDX-License-Identifier: Apache-2.0 */
/* Memcpy peaks measured by rank 0 inside a launch: see peak_launch.h. */
#include "peak_launch.h"

#include <string.h>

#include "peak.h"

typedef struct peak_arg {
    pld_dtensor sig;
    int max_threads, nsizes;
    const int64_t *sizes; /* in pld_host_alloc memory, like the rest */
    double *gbs;
} peak_arg;

static void k_peak(pld_ctx *c, void *p)
{
    peak_arg *a = p;
    if (pld_rank(c) == 0)
        for (int t = 1; t <= a->max_threads; t++)
            for (int i = 0; i < a->nsizes; i++)
                a->gbs[(size_t)t * (size_t)a->nsizes + (size_t)i] =
                    bench_memcpy_gbs(t, a->sizes[i] > 0 ? a->sizes[i] : 1);
    pld_barrier(c, a->sig);
}

pld_status bench_peak_measure(pld_world *w, int max_threads, const int64_t *sizes, int nsizes,
                              double *out)
{
    int p = pld_world_size(w);
    size_t cells = (size_t)(max_threads + 1) * (size_t)nsizes;
    pld_window_buffer *sb = NULL;
    peak_arg *a = pld_host_alloc(w, sizeof *a);
    int64_t *sz = pld_host_alloc(w, sizeof *sz * (size_t)nsizes);
    double *gbs = pld_host_alloc(w, sizeof *gbs * cells);
    pld_status st = a && sz && gbs ? PLD_OK : PLD_ERR_NOMEM;
    if (st == PLD_OK)
        st = pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)p, "bench_peak_signal", &sb);
    if (st == PLD_OK)
        st = pld_window(sb, PLD_INT32, 2, PLD_IDX(p, 1), &a->sig);
    if (st == PLD_OK) {
        memcpy(sz, sizes, sizeof *sz * (size_t)nsizes);
        a->max_threads = max_threads;
        a->nsizes = nsizes;
        a->sizes = sz;
        a->gbs = gbs;
        st = pld_launch(w, k_peak, a);
    }
    if (st == PLD_OK)
        for (size_t i = (size_t)nsizes; i < cells; i++)
            out[i] = gbs[i];
    if (sb)
        pld_free_window_buffer(w, sb);
    pld_host_free(w, gbs);
    pld_host_free(w, sz);
    pld_host_free(w, a);
    return st;
}
