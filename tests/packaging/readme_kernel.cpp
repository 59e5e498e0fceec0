// SPDX-License-Identifier: Apache-2.0
// The README's kernel compiled as C++: the public headers (extern "C",
// PLD_IDX) must work from C++. The only changes from the C are the casts
// C++ requires from void * and the C++ spelling of the headers.
#include <pld/pld.h>

#include <cstdio>

struct args {
    pld_dtensor data, sig;
};

/* Every rank stages its row, barriers, then reads its right neighbour's row. */
static void kernel(pld_ctx *c, void *p)
{
    args *a = static_cast<args *>(p);
    int me = pld_rank(c), n = pld_nranks(c);
    pld_tile *t = pld_tile_create(c, PLD_FP32, 1, 64);
    float *v = static_cast<float *>(pld_tile_data(t));
    for (int j = 0; j < 64; j++)
        v[j] = static_cast<float>(me * 1000 + j);
    pld_remote_store(c, t, a->data, me, PLD_IDX(me, 0), PLD_ATOMIC_NONE);
    pld_barrier(c, a->sig); /* self-clearing credit barrier */
    pld_remote_load(c, t, a->data, (me + 1) % n, PLD_IDX((me + 1) % n, 0));
    if (v[5] != ((me + 1) % n) * 1000 + 5)
        pld_fail(c, "got %g", static_cast<double>(v[5]));
}

int main(int argc, char **argv)
{
    pld_world *w;
    if (pld_world_init_from_args(&w, &argc, &argv))
        return 1;
    int n = pld_world_size(w);
    pld_window_buffer *d, *s;
    args *a = static_cast<args *>(pld_host_alloc(w, sizeof *a));
    /* PLD_IDX with values of other integer types, as C converts them */
    size_t rows = static_cast<size_t>(n);
    pld_alloc_window_buffer(w, 64 * 4 * rows, "data", &d);
    pld_window(d, PLD_FP32, 2, PLD_IDX(rows, 64L), &a->data);
    pld_alloc_window_buffer(w, 4 * rows, "sig", &s);
    pld_window(s, PLD_INT32, 2, PLD_IDX(n, 1), &a->sig);
    pld_status st = pld_launch(w, kernel, a);
    if (st)
        std::fprintf(stderr, "%s: %s\n", pld_status_name(st), pld_world_error(w));
    else if (pld_is_root_process(w))
        std::puts("OK");
    pld_world_finalize(w);
    return st != PLD_OK;
}
