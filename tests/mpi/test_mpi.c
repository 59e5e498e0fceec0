/* SPDX-License-Identifier: Apache-2.0 */
/* The mpi transport under mpirun (run at several process counts by ctest):
 * one rank per process, collectives against references, atomic adds of
 * every dtype, multi-core calls, and every failure path agreed by all
 * processes: a rank's error, a bad argument, a wait timeout, a device list
 * that does not match the launcher, host access to a rank of another
 * process. On one node windows are MPI shared memory unless PLD_MPI_SHM=0
 * (ctest runs both: the copies between mapped slices, and MPI RMA as
 * between machines). Plain C (Criterion forks, which does not mix with MPI); each
 * failed check prints rank, line and both sides, and the program exits 1.
 * "OK" is printed by rank 0 when every process passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pld/pld.h"

static int me = -1, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "rank %d: %s:%d: check failed: %s: ", me, __FILE__, __LINE__, #cond);  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define CHECK_MSG(w, needle)                                                                       \
    CHECK(strstr(pld_world_error(w), (needle)) != NULL, "message '%s' lacks '%s'",                 \
          pld_world_error(w), (needle))

static pld_world *world(const char *devices, int timeout_ms)
{
    pld_config cfg = {.transport = "mpi", .devices = devices, .wait_timeout_ms = timeout_ms};
    pld_world *w = NULL;
    pld_status st = pld_world_init(&w, &cfg);
    if (st != PLD_OK) {
        fprintf(stderr, "rank %d: pld_world_init: %s\n", me, pld_last_error());
        exit(1);
    }
    return w;
}

static pld_dtensor window2d(pld_world *w, const char *name, pld_dtype t, int64_t rows, int64_t cols)
{
    pld_window_buffer *b;
    pld_dtensor d;
    pld_status st = pld_alloc_window_buffer(w, (size_t)(rows * cols) * pld_dtype_size(t), name, &b);
    if (st == PLD_OK)
        st = pld_window(b, t, 2, PLD_IDX(rows, cols), &d);
    if (st != PLD_OK) {
        fprintf(stderr, "rank %d: window %s: %s\n", me, name, pld_world_error(w));
        exit(1);
    }
    return d;
}

static float *own(pld_world *w, pld_dtensor t)
{
    pld_tensor v;
    pld_status st = pld_window_host_view(w, t, me, &v);
    CHECK(st == PLD_OK, "host view of own rank: %s", pld_world_error(w));
    return v.data;
}

/* Small integers, exact in fp32: who made it, for whom, which element. */
static float val(int src, int64_t row, int64_t i)
{
    return (float)((src * 7 + row * 3 + i) % 1000);
}

/* ---- the world --------------------------------------------------------------- */

static void test_world(int np)
{
    pld_world *w = NULL;
    CHECK(pld_world_init(&w, NULL) == PLD_OK, "%s", pld_last_error());
    if (!w)
        return;
    CHECK(!strcmp(pld_world_transport(w), "mpi"), "default transport '%s' under mpirun",
          pld_world_transport(w));
    CHECK(pld_world_size(w) == np, "size %d, np %d", pld_world_size(w), np);
    CHECK(pld_is_root_process(w) == (me == 0), "root %d", pld_is_root_process(w));
    int pids_distinct = 1;
    for (int r = 0; r < np; r++) {
        CHECK(pld_world_hosts_rank(w, r) == (r == me), "hosts rank %d", r);
        for (int q = 0; q < r; q++)
            pids_distinct &= pld_rank_pid(w, r) != pld_rank_pid(w, q);
    }
    CHECK(pids_distinct, "every rank has its own process");
    pld_dtensor d = window2d(w, "data", PLD_FP32, 1, 4);
    if (np > 1) {
        pld_tensor v;
        int other = (me + 1) % np;
        CHECK(pld_window_host_view(w, d, other, &v) == PLD_ERR_UNSUPPORTED, "view of rank %d",
              other);
        CHECK_MSG(w, "runs in another process");
        pld_counters cnt;
        CHECK(pld_rank_counters(w, other, &cnt) == PLD_ERR_UNSUPPORTED, "counters of rank %d",
              other);
    }
    pld_world_finalize(w);

    /* a device list that is not one device per process */
    char devs[16];
    snprintf(devs, sizeof devs, "0-%d", np);
    pld_config cfg = {.transport = "mpi", .devices = devs};
    w = NULL;
    CHECK(pld_world_init(&w, &cfg) == PLD_ERR_ARG, "device list of %d ranks under %d processes",
          np + 1, np);
    CHECK(strstr(pld_last_error(), "mpirun started") != NULL, "message '%s'", pld_last_error());
    CHECK(w == NULL, "no world on failure");
}

/* ---- collectives against references ------------------------------------------- */

static void test_collectives(int np, int64_t s)
{
    pld_world *w = world(NULL, 0);
    pld_dtensor sig = window2d(w, "sig", PLD_INT32, np, 1);

    /* allgather: stage [1,S] -> target [P,S] */
    pld_dtensor stage = window2d(w, "stage", PLD_FP32, 1, s);
    pld_dtensor target = window2d(w, "target", PLD_FP32, np, s);
    float *st = own(w, stage), *tg = own(w, target);
    for (int64_t i = 0; i < s; i++)
        st[i] = val(me, 0, i);
    CHECK(pld_host_allgather(w, stage, target, &sig) == PLD_OK, "%s", pld_world_error(w));
    int bad = 0;
    for (int r = 0; r < np; r++)
        for (int64_t i = 0; i < s; i++)
            bad += tg[r * s + i] != val(r, 0, i);
    CHECK(bad == 0, "allgather S=%lld: %d wrong elements", (long long)s, bad);

    /* all_to_all: row d of rank r's input is for rank d */
    pld_dtensor input = window2d(w, "input", PLD_FP32, np, s);
    float *in = own(w, input);
    for (int d = 0; d < np; d++)
        for (int64_t i = 0; i < s; i++)
            in[d * s + i] = val(me, d, i);
    CHECK(pld_host_all_to_all(w, input, target, &sig) == PLD_OK, "%s", pld_world_error(w));
    bad = 0;
    for (int r = 0; r < np; r++)
        for (int64_t i = 0; i < s; i++)
            bad += tg[r * s + i] != val(r, me, i);
    CHECK(bad == 0, "all_to_all S=%lld: %d wrong elements", (long long)s, bad);

    /* reduce_scatter: row me = sum over ranks of their row me */
    for (int d = 0; d < np; d++)
        for (int64_t i = 0; i < s; i++)
            in[d * s + i] = val(me, d, i);
    CHECK(pld_host_reduce_scatter(w, input, &sig, PLD_SUM) == PLD_OK, "%s", pld_world_error(w));
    bad = 0;
    for (int64_t i = 0; i < s; i++) {
        float want = 0;
        for (int r = 0; r < np; r++)
            want += val(r, me, i);
        bad += in[me * s + i] != want;
    }
    CHECK(bad == 0, "reduce_scatter S=%lld: %d wrong elements", (long long)s, bad);

    /* allreduce, mesh, ring (its own signal shape) and recursive halving
     * and doubling (ranks folding in where np is not a power of two) */
    pld_dtensor ring_sig = window2d(w, "ring_sig", PLD_INT32, np > 1 ? 2 * (np - 1) : 1, np);
    static const pld_allreduce_mode modes[] = {PLD_MESH, PLD_RING, PLD_RABENSEIFNER};
    static const char *const mode_names[] = {"mesh", "ring", "rabenseifner"};
    for (int m = 0; m < 3; m++) {
        pld_allreduce_mode mode = modes[m];
        for (int64_t i = 0; i < s; i++)
            tg[i] = val(me, 1, i);
        pld_dtensor data = target;
        data.shape[0] = 1; /* [1,S] view of the target window */
        CHECK(pld_host_allreduce(w, data, mode == PLD_RING ? &ring_sig : &sig, PLD_SUM, mode, 1) ==
                  PLD_OK,
              "%s", pld_world_error(w));
        bad = 0;
        for (int64_t i = 0; i < s; i++) {
            float want = 0;
            for (int r = 0; r < np; r++)
                want += val(r, 1, i);
            bad += tg[i] != want;
        }
        CHECK(bad == 0, "allreduce %s S=%lld: %d wrong elements", mode_names[m], (long long)s, bad);
    }

    /* broadcast from the last rank */
    for (int64_t i = 0; i < s; i++)
        st[i] = val(me, 2, i);
    CHECK(pld_host_broadcast(w, stage, &sig, np - 1) == PLD_OK, "%s", pld_world_error(w));
    bad = 0;
    for (int64_t i = 0; i < s; i++)
        bad += st[i] != val(np - 1, 2, i);
    CHECK(bad == 0, "broadcast S=%lld: %d wrong elements", (long long)s, bad);

    /* multi-core allreduce: a thread per core, each calling MPI */
    pld_dtensor lanes = window2d(w, "lanes", PLD_INT32, np, 4);
    for (int64_t i = 0; i < s; i++)
        tg[i] = val(me, 3, i);
    pld_dtensor data = target;
    data.shape[0] = 1;
    CHECK(pld_host_allreduce(w, data, &lanes, PLD_SUM, PLD_MESH, 3) == PLD_OK, "%s",
          pld_world_error(w));
    bad = 0;
    for (int64_t i = 0; i < s; i++) {
        float want = 0;
        for (int r = 0; r < np; r++)
            want += val(r, 3, i);
        bad += tg[i] != want;
    }
    CHECK(bad == 0, "allreduce on 3 cores S=%lld: %d wrong elements", (long long)s, bad);
    pld_world_finalize(w);
}

/* ---- atomic adds of every dtype into rank 0 ----------------------------------- */

typedef struct add_arg {
    pld_dtensor acc[6], sig;
} add_arg;

static const pld_dtype add_types[6] = {PLD_FP32,  PLD_FP16,  PLD_BF16,
                                       PLD_INT32, PLD_INT16, PLD_INT8};

static void add_kernel(pld_ctx *c, void *p)
{
    add_arg *a = p;
    for (int k = 0; k < 6; k++) {
        pld_tile *t = pld_tile_create(c, add_types[k], 1, 8);
        unsigned char *d = pld_tile_data(t);
        for (int i = 0; i < 8; i++) {
            switch (add_types[k]) {
            case PLD_FP32:
                ((float *)d)[i] = 1.0f;
                break;
            case PLD_FP16:
                ((uint16_t *)d)[i] = 0x3c00;
                break; /* 1.0 */
            case PLD_BF16:
                ((uint16_t *)d)[i] = 0x3f80;
                break; /* 1.0 */
            case PLD_INT32:
                ((int32_t *)d)[i] = 1;
                break;
            case PLD_INT16:
                ((int16_t *)d)[i] = 1;
                break;
            default:
                ((int8_t *)d)[i] = 1;
                break;
            }
        }
        pld_remote_store(c, t, a->acc[k], 0, PLD_IDX(0, 0), PLD_ATOMIC_ADD);
        pld_tile_free(c, t);
    }
    pld_barrier(c, a->sig);
}

static void test_atomic_add(int np)
{
    pld_world *w = world(NULL, 0);
    add_arg *a = pld_host_alloc(w, sizeof *a);
    for (int k = 0; k < 6; k++)
        a->acc[k] = window2d(w, pld_dtype_name(add_types[k]), add_types[k], 1, 8);
    a->sig = window2d(w, "sig", PLD_INT32, np, 1);
    for (int round = 0; round < 3; round++)
        CHECK(pld_launch(w, add_kernel, a) == PLD_OK, "%s", pld_world_error(w));
    if (me == 0) {
        pld_tensor v[6];
        for (int k = 0; k < 6; k++)
            pld_window_host_view(w, a->acc[k], 0, &v[k]);
        for (int i = 0; i < 8; i++) {
            int want = 3 * np;
            CHECK(((float *)v[0].data)[i] == (float)want, "fp32 %g", ((float *)v[0].data)[i]);
            CHECK(((int32_t *)v[3].data)[i] == want, "int32 %d", ((int32_t *)v[3].data)[i]);
            CHECK(((int16_t *)v[4].data)[i] == want, "int16 %d", ((int16_t *)v[4].data)[i]);
            CHECK(((int8_t *)v[5].data)[i] == want, "int8 %d", ((int8_t *)v[5].data)[i]);
            /* fp16/bf16 of small integers are exact */
            float f16 = 0, b16 = 0;
            uint16_t hx = ((uint16_t *)v[1].data)[i], bx = ((uint16_t *)v[2].data)[i];
            /* fp16: 1.mmmmmmmmmm x 2^(e-15); bf16: the high half of an fp32 */
            f16 = (float)(1024 + (hx & 0x3ff)) / 1024.0f * (float)(1 << ((hx >> 10) & 0x1f)) /
                  32768.0f;
            uint32_t bits = (uint32_t)bx << 16;
            memcpy(&b16, &bits, sizeof b16);
            CHECK(f16 == (float)want, "fp16 0x%04x = %g, want %d", hx, f16, want);
            CHECK(b16 == (float)want, "bf16 0x%04x = %g, want %d", bx, b16, want);
        }
    }
    pld_host_free(w, a);
    pld_world_finalize(w);
}

/* ---- failures every process agrees on ---------------------------------------- */

typedef struct fail_arg {
    pld_dtensor sig;
    int what;
} fail_arg;

enum { FAIL_RANK, FAIL_BAD_PEER, FAIL_TIMEOUT, FAIL_OVERFLOW, FAIL_BEFORE_BARRIER, FAIL_NONE };

static void fail_kernel(pld_ctx *c, void *p)
{
    fail_arg *a = p;
    int r = pld_rank(c), n = pld_nranks(c);
    switch (a->what) {
    case FAIL_RANK: /* the last rank fails; the others wait for it forever */
        if (r == n - 1)
            pld_fail(c, "boom %d", 42);
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        break;
    case FAIL_BAD_PEER:
        if (r == 0)
            pld_notify(c, a->sig, n + 5, PLD_IDX(0, 0), 1, PLD_NOTIFY_SET);
        pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
        break;
    case FAIL_TIMEOUT: /* rank 0 waits for a notify nobody sends */
        if (r == 0)
            pld_wait(c, a->sig, PLD_IDX(0, 0), 7, PLD_WAIT_EQ);
        break;
    case FAIL_OVERFLOW: /* rank 0 adds INT32_MAX twice to the last rank's cell */
        if (r == 0)
            for (int i = 0; i < 2; i++)
                pld_notify(c, a->sig, n - 1, PLD_IDX(0, 0), 2147483647, PLD_NOTIFY_ATOMIC_ADD);
        break;
    case FAIL_BEFORE_BARRIER: /* the last rank fails before the barrier the others are in */
        if (r == n - 1)
            pld_fail(c, "boom before the barrier");
        pld_barrier(c, a->sig);
        break;
    default:
        pld_barrier(c, a->sig);
    }
}

static void test_failures(int np)
{
    pld_world *w = world(NULL, 300);
    fail_arg *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb;
    CHECK(pld_alloc_window_buffer(w, sizeof(int32_t) * (size_t)np, "sig", &sb) == PLD_OK, "alloc");
    CHECK(pld_window(sb, PLD_INT32, 2, PLD_IDX(np, 1), &a->sig) == PLD_OK, "view");
    char want[64];

    a->what = FAIL_RANK;
    CHECK(pld_launch(w, fail_kernel, a) == PLD_ERR_CHECK, "a rank's pld_fail: %s",
          pld_world_error(w));
    snprintf(want, sizeof want, "rank %d (device %d): pld_fail: boom 42", np - 1, np - 1);
    CHECK_MSG(w, want);

    pld_window_buffer_reset(w, sb);
    a->what = FAIL_BAD_PEER;
    CHECK(pld_launch(w, fail_kernel, a) == PLD_ERR_ARG, "bad peer: %s", pld_world_error(w));
    CHECK_MSG(w, "rank 0 (device 0): pld_notify");
    snprintf(want, sizeof want, "%d", np + 5);
    CHECK_MSG(w, want);

    pld_window_buffer_reset(w, sb);
    a->what = FAIL_TIMEOUT;
    CHECK(pld_launch(w, fail_kernel, a) == PLD_ERR_TIMEOUT, "timeout: %s", pld_world_error(w));
    CHECK_MSG(w, "rank 0 (device 0): pld_wait");
    CHECK_MSG(w, "timed out after 300 ms");

    /* an add past INT32_MAX is an error (it used to wrap the cell to -2),
     * found from the value MPI_Fetch_and_op (or the mapped cell) returned */
    pld_window_buffer_reset(w, sb);
    a->what = FAIL_OVERFLOW;
    CHECK(pld_launch(w, fail_kernel, a) == PLD_ERR_DATA, "overflow: %s", pld_world_error(w));
    snprintf(want, sizeof want, "AtomicAdd of 2147483647 to 'sig'[0,0] at peer %d ", np - 1);
    CHECK_MSG(w, want);
    CHECK_MSG(w, "overflows int32: the cell holds 2147483647 and 2147483647 + 2147483647");
    if (me == np - 1)
        CHECK(*(int32_t *)(void *)own(w, a->sig) == 2147483647, "cell after the failed add: %d",
              *(int32_t *)(void *)own(w, a->sig));

    /* The peers' credits for the rank that failed before the barrier sit in
     * that rank's slice: its process never entered the call, yet the signal
     * is cleared there too (from the peers' fingerprints), so the next
     * barriers on it work with no reset in between. */
    pld_window_buffer_reset(w, sb);
    a->what = FAIL_BEFORE_BARRIER;
    CHECK(pld_launch(w, fail_kernel, a) == PLD_ERR_CHECK, "fail before a barrier: %s",
          pld_world_error(w));
    a->what = FAIL_NONE;
    for (int i = 0; i < 5; i++)
        CHECK(pld_launch(w, fail_kernel, a) == PLD_OK,
              "barrier %d after a rank failed before it: %s", i, pld_world_error(w));

    /* the world still works */
    pld_window_buffer_reset(w, sb);
    a->what = FAIL_NONE;
    for (int i = 0; i < 50; i++)
        CHECK(pld_launch(w, fail_kernel, a) == PLD_OK, "launch after failures: %s",
              pld_world_error(w));
    pld_host_free(w, a);
    pld_world_finalize(w);
}

/* --die: the last rank kills itself inside a launch while the others
 * wait for it. The launcher must end the whole job (tests/mpi/rank_death.sh
 * checks the exit status and that no process is left). */
static void die_kernel(pld_ctx *c, void *p)
{
    fail_arg *a = p;
    if (pld_rank(c) == pld_nranks(c) - 1)
        abort();
    pld_wait(c, a->sig, PLD_IDX(0, 0), 1, PLD_WAIT_GE);
}

static int run_death(int np)
{
    pld_world *w = world(NULL, 0);
    fail_arg *a = pld_host_alloc(w, sizeof *a);
    a->sig = window2d(w, "sig", PLD_INT32, np, 1);
    pld_launch(w, die_kernel, a);
    fprintf(stderr, "rank %d: the launch returned after a peer died\n", me);
    return 1;
}

/* Teams under MPI: every process makes the same team (a collective call);
 * processes that pass different arguments all get PLD_ERR_ARG. */
static void test_teams(int np)
{
    pld_world *w;
    CHECK(pld_world_init(&w, NULL) == PLD_OK, "%s", pld_last_error());
    pld_team *x = NULL, *y = NULL;
    int xr = np >= 4 ? 2 : 1;
    CHECK(pld_team_split_2d(w, NULL, xr, "tp", &x, "dp", &y) == PLD_OK, "%s", pld_world_error(w));
    CHECK(pld_team_rank_of(x, me) == me % xr, "x rank of %d", me);
    CHECK(pld_team_rank_of(y, me) == me / xr, "y rank of %d", me);
    if (np >= 2) {
        pld_team *t = NULL;
        /* rank 0 asks for another size than the others */
        pld_status st = pld_team_split_strided(w, NULL, 0, 1, me == 0 ? 1 : 2, "s", &t);
        CHECK(st == PLD_ERR_ARG, "disagreeing split: %s", pld_status_name(st));
        CHECK_MSG(w, "the processes passed different arguments");
    }
    pld_team_free(w, x);
    pld_team_free(w, y);
    pld_world_finalize(w);
}

int main(int argc, char **argv)
{
    int provided, np;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc > 1 && !strcmp(argv[1], "--die"))
        return run_death(np);

    test_world(np);
    test_collectives(np, 1);
    test_collectives(np, 250007); /* ~1 MB rows: chunked through UB, odd tails */
    test_atomic_add(np);
    test_failures(np);
    test_teams(np);

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0 && total == 0)
        printf("OK\n");
    MPI_Finalize();
    return total ? 1 : 0;
}
