/* SPDX-License-Identifier: Apache-2.0 */
/* Trace tracks and flow arrows, on the thread and process transports:
 * every track with a slice has a name (a rank's, and each extra core's
 * "rank R (device D) core B"), and a wait that blocked is the end of a flow
 * arrow ("ph":"s" on the notify's track, "ph":"f" on the wait's, one id)
 * from the notify that released it. */
#include <criterion/criterion.h>
#include <pld/pld.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

typedef struct fargs {
    pld_dtensor sig, data, hand;
} fargs;

static void pause_ms(int ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Rank 1 waits for rank 0's notify, which comes 30 ms late: the wait
 * blocks, so it has a slice and an arrow from rank 0's notify. Then a
 * multi-core allreduce gives rank r a second core's track. */
static void kernel(pld_ctx *c, void *p)
{
    fargs *a = p;
    int me = pld_rank(c);
    if (me == 0) {
        pause_ms(30);
        pld_notify(c, a->hand, 1, PLD_IDX(1, 0), 1, PLD_NOTIFY_SET);
    } else if (me == 1) {
        pld_wait(c, a->hand, PLD_IDX(1, 0), 1, PLD_WAIT_EQ);
        pld_notify(c, a->hand, 1, PLD_IDX(1, 0), 0, PLD_NOTIFY_SET); /* for the next launch */
    }
    pld_allreduce_cores(c, a->data, a->sig, PLD_SUM, PLD_MESH, 2);
}

/* 1 when the trace names track (pid, tid) with exactly `name` (NULL: any). */
static int named(const char *s, int tid, const char *name)
{
    char want[200];
    snprintf(want, sizeof want, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":%d,",
             tid);
    const char *at = strstr(s, want);
    if (!at || !name)
        return at != NULL;
    snprintf(want, sizeof want, "\"args\":{\"name\":\"%s\"}}", name);
    const char *e = strchr(at, '\n');
    const char *n = strstr(at, want);
    return n && (!e || n < e);
}

static void run(const char *transport)
{
    char path[] = "/tmp/pld-trace-flow-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    pld_config cfg = {.devices = "0-2", .transport = transport, .trace_path = path};
    pld_world *w;
    cr_assert_eq(pld_world_init(&w, &cfg), PLD_OK, "%s", pld_last_error());
    fargs *a = pld_host_alloc(w, sizeof *a);
    pld_window_buffer *sb, *db, *hb;
    cr_assert_eq(pld_alloc_window_buffer(w, 3 * 2 * 4, "sig", &sb), PLD_OK);
    cr_assert_eq(pld_window(sb, PLD_INT32, 2, PLD_IDX(3, 2), &a->sig), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 4096 * 4, "data", &db), PLD_OK);
    cr_assert_eq(pld_window(db, PLD_FP32, 1, PLD_IDX(4096), &a->data), PLD_OK);
    cr_assert_eq(pld_alloc_window_buffer(w, 3 * 4, "hand", &hb), PLD_OK);
    cr_assert_eq(pld_window(hb, PLD_INT32, 2, PLD_IDX(3, 1), &a->hand), PLD_OK);
    cr_assert_eq(pld_launch(w, kernel, a), PLD_OK, "%s", pld_world_error(w));
    cr_assert_eq(pld_launch(w, kernel, a), PLD_OK, "%s", pld_world_error(w));
    char *s = tu_slurp(path, "trace");

    /* every track that holds a slice is named */
    int tracks = 0;
    for (const char *p = s; (p = strstr(p, "\"ph\":\"X\",\"pid\":0,\"tid\":")); p++) {
        int tid = atoi(p + strlen("\"ph\":\"X\",\"pid\":0,\"tid\":"));
        cr_assert(named(s, tid, NULL), "track %d has slices and no name", tid);
        tracks++;
    }
    cr_assert_gt(tracks, 0);
    for (int r = 0; r < 3; r++) {
        char name[64];
        snprintf(name, sizeof name, "rank %d (device %d)", r, r);
        cr_expect(named(s, r * 1000, name), "rank %d's track is '%s'", r, name);
        snprintf(name, sizeof name, "rank %d (device %d) core 1", r, r);
        cr_expect(named(s, r * 1000 + 1, name), "core 1 of rank %d is '%s'", r, name);
    }
    cr_expect(!named(s, 2, NULL), "a core with no slices gets no track");

    /* the blocked wait of each launch: an arrow from rank 0's notify (tid
     * 0) to rank 1's wait (tid 1000), its two ends with one id */
    int arrows = 0;
    for (const char *p = s; (p = strstr(p, "\"ph\":\"s\",\"id\":")); p++) {
        unsigned long long id;
        int pid, tid;
        cr_assert_eq(sscanf(p, "\"ph\":\"s\",\"id\":%llu,\"pid\":%d,\"tid\":%d", &id, &pid, &tid),
                     3, "%.120s", p);
        char fin[160];
        snprintf(fin, sizeof fin, "\"ph\":\"f\",\"bp\":\"e\",\"id\":%llu,\"pid\":", id);
        const char *f = strstr(s, fin);
        cr_assert_not_null(f, "flow %llu has no end", id);
        int fpid, ftid;
        cr_assert_eq(sscanf(f + strlen(fin), "%d,\"tid\":%d", &fpid, &ftid), 2);
        if (tid == 0 && ftid == 1000)
            arrows++;
    }
    cr_expect_geq(arrows, 2, "rank 0's notify -> rank 1's wait, once per launch (got %d)", arrows);
    /* the pairing records ride in the slices' args */
    cr_expect(strstr(s, "\"name\":\"pld_notify\""), "notify slices");
    cr_expect(strstr(s, "\"flow\":[1,"), "the blocked wait records its cell");
    cr_assert(strcmp(s + strlen(s) - 4, "\n]}\n") == 0, "the JSON is closed");
    free(s);
    pld_world_finalize(w);
    unlink(path);
}

Test(trace_flow, thread_transport, .timeout = 60)
{
    run("thread");
}
Test(trace_flow, process_transport, .timeout = 60)
{
    run("process");
}
