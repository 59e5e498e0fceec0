/* SPDX-License-Identifier: Apache-2.0 */
/* Handle lifetime: the registry of live worlds, the current kernel context
 * of a thread, the guards of host calls, and pld_host_alloc's blocks. See
 * handles.h for why freed memory waits in quarantine. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"

/* ---- worlds ---------------------------------------------------------- */

#define WORLD_QUARANTINE 64

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pld_world **live_worlds;
static int nlive, live_cap;
static pld_world *dead_worlds[WORLD_QUARANTINE]; /* ring, oldest at dead_next */
static int dead_next;
static uint64_t world_serial;

pld_status pld__world_register(pld_world *w)
{
    pthread_mutex_lock(&reg_lock);
    if (nlive == live_cap) {
        int cap = live_cap ? live_cap * 2 : 8;
        pld_world **grown = realloc(live_worlds, sizeof *grown * (size_t)cap);
        if (!grown) {
            pthread_mutex_unlock(&reg_lock);
            return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
        }
        live_worlds = grown;
        live_cap = cap;
    }
    w->gen = ++world_serial;
    live_worlds[nlive++] = w;
    pthread_mutex_unlock(&reg_lock);
    return PLD_OK;
}

void pld__world_retire(pld_world *w)
{
    pld__world_unregister(w);
    pthread_mutex_lock(&reg_lock);
    pld_world *oldest = dead_worlds[dead_next];
    dead_worlds[dead_next] = w;
    dead_next = (dead_next + 1) % WORLD_QUARANTINE;
    pthread_mutex_unlock(&reg_lock);
    free(oldest);
}

/* 1 live, 0 finalized (still in quarantine), -1 unknown. */
static int world_state(const pld_world *w)
{
    int st = -1;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nlive && st < 0; i++)
        if (live_worlds[i] == w)
            st = 1;
    for (int i = 0; i < WORLD_QUARANTINE && st < 0; i++)
        if (dead_worlds[i] == w)
            st = 0;
    pthread_mutex_unlock(&reg_lock);
    return st;
}

/* Worlds a stuck rank thread may still use: never freed, and kept here so
 * that they stay reachable (a leak on purpose, not a lost pointer). */
static pld_world **abandoned;
static int nabandoned;

void pld__world_abandon(pld_world *w)
{
    pld__world_unregister(w);
    pthread_mutex_lock(&reg_lock);
    pld_world **grown = realloc(abandoned, sizeof *grown * (size_t)(nabandoned + 1));
    if (grown) {
        abandoned = grown;
        abandoned[nabandoned++] = w;
    }
    pthread_mutex_unlock(&reg_lock);
}

int pld__world_is_live(const pld_world *w)
{
    return w && world_state(w) == 1;
}

void pld__world_unregister(pld_world *w)
{
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nlive; i++)
        if (live_worlds[i] == w) {
            live_worlds[i] = live_worlds[--nlive];
            break;
        }
    pthread_mutex_unlock(&reg_lock);
}

pld_status pld__world_check(const pld_world *w, const char *api)
{
    if (!w)
        return pld__init_fail(PLD_ERR_ARG, "%s: world is NULL", api);
    int st = world_state(w);
    if (st == 1)
        return PLD_OK;
    if (st == 0)
        return pld__init_fail(PLD_ERR_ARG,
                              "%s: world #%llu was finalized (pld_world_finalize); this handle "
                              "is no longer valid",
                              api, (unsigned long long)w->gen);
    return pld__init_fail(PLD_ERR_ARG,
                          "%s: %p is not a live world (never made by pld_world_init, or "
                          "finalized long ago)",
                          api, (const void *)w);
}

pld_world *pld__buffer_world(const pld_window_buffer *buf)
{
    pld_world *found = NULL;
    if (!buf)
        return NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nlive && !found; i++)
        if (pld__window_slot(live_worlds[i], buf) >= 0)
            found = live_worlds[i];
    pthread_mutex_unlock(&reg_lock);
    return found;
}

pld_world *pld__team_world(const pld_team *t)
{
    pld_world *found = NULL;
    if (!t)
        return NULL;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < nlive && !found; i++)
        if (pld__team_of_world(live_worlds[i], t))
            found = live_worlds[i];
    pthread_mutex_unlock(&reg_lock);
    return found;
}

/* ---- kernels --------------------------------------------------------- */

static _Thread_local pld_ctx *current_ctx;

pld_ctx *pld__current_ctx(void)
{
    return current_ctx;
}

void pld__set_current_ctx(pld_ctx *c)
{
    current_ctx = c;
}

void pld__null_ctx(const char *api)
{
    fprintf(stderr,
            "pld: %s: the context is NULL; kernel-side calls take the pld_ctx their kernel "
            "received and run only inside pld_launch\n",
            api);
    abort();
}

/* ---- guards ---------------------------------------------------------- */

/* w->launching: 0 idle, LAUNCH while a launch runs, CHANGE while a host
 * call allocates or frees. One host thread at a time does either. */
enum { LAUNCH = 1, CHANGE = 2 };

static pld_status busy(pld_world *w, const char *api, int now, const char *what)
{
    return pld__world_fail(w, PLD_ERR_ARG, "%s: %s on this world (on another host thread)%s%s", api,
                           now == LAUNCH ? "a launch is running"
                                         : "a window or host block is being allocated or freed",
                           what ? ": " : "", what ? what : "");
}

pld_status pld__host_enter(pld_world *w, const char *api, const char *what)
{
    pld_ctx *c = current_ctx;
    if (c)
        pld__kraise(c, PLD_ERR_ARG, api,
                    "called inside a kernel: %s; host calls that change a world run on the "
                    "host, before or after pld_launch",
                    what);
    pld_status st = pld__world_usable(w, api);
    if (st != PLD_OK)
        return st;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&w->launching, &idle, CHANGE))
        return busy(w, api, idle, what);
    return PLD_OK;
}

void pld__host_leave(pld_world *w)
{
    atomic_store(&w->launching, 0);
}

pld_status pld__launch_claim(pld_world *w)
{
    int idle = 0;
    if (atomic_compare_exchange_strong(&w->launching, &idle, LAUNCH))
        return PLD_OK;
    if (idle == LAUNCH)
        return pld__world_fail(w, PLD_ERR_ARG,
                               "pld_launch: another host thread is running a launch on this "
                               "world; launches of one world run one at a time");
    return busy(w, "pld_launch", idle, NULL);
}

/* ---- host blocks ----------------------------------------------------- */

#define BLOCK_QUARANTINE 16
#define BLOCK_QUARANTINE_BYTES ((size_t)64 << 20)

typedef struct host_block {
    void *p;
    size_t bytes;
    uint64_t gen;      /* serial number of the allocation */
    uint64_t freed_at; /* 0 while live; else the order of its free */
} host_block;

struct pld__host_blocks {
    pthread_mutex_t lock;
    host_block *v;
    int n, cap;
    int nfreed;
    size_t freed_bytes;
    uint64_t serial, frees;
};

static struct pld__host_blocks *blocks_of(pld_world *w)
{
    /* made at first use, by a host call that holds the world */
    if (!w->hblocks) {
        struct pld__host_blocks *b = calloc(1, sizeof *b);
        if (!b)
            return NULL;
        pthread_mutex_init(&b->lock, NULL);
        w->hblocks = b;
    }
    return w->hblocks;
}

static host_block *find_block(struct pld__host_blocks *b, const void *p)
{
    for (int i = 0; i < b->n; i++)
        if (b->v[i].p == p)
            return &b->v[i];
    return NULL;
}

void *pld__host_block_alloc(pld_world *w, size_t bytes)
{
    struct pld__host_blocks *b = blocks_of(w);
    if (!b)
        return NULL;
    void *p = w->tp->host_alloc(w, bytes);
    if (!p)
        return NULL;
    pthread_mutex_lock(&b->lock);
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        host_block *grown = realloc(b->v, sizeof *grown * (size_t)cap);
        if (!grown) {
            pthread_mutex_unlock(&b->lock);
            w->tp->host_free(w, p);
            return NULL;
        }
        b->v = grown;
        b->cap = cap;
    }
    b->v[b->n++] = (host_block){.p = p, .bytes = bytes, .gen = ++b->serial};
    pthread_mutex_unlock(&b->lock);
    return p;
}

/* Gives the oldest freed blocks back while the quarantine is too full. */
static void release_oldest(pld_world *w, struct pld__host_blocks *b)
{
    while (b->nfreed > BLOCK_QUARANTINE || b->freed_bytes > BLOCK_QUARANTINE_BYTES) {
        int oldest = -1;
        for (int i = 0; i < b->n; i++)
            if (b->v[i].freed_at && (oldest < 0 || b->v[i].freed_at < b->v[oldest].freed_at))
                oldest = i;
        w->tp->host_free(w, b->v[oldest].p);
        b->nfreed--;
        b->freed_bytes -= b->v[oldest].bytes;
        b->v[oldest] = b->v[--b->n];
    }
}

pld_status pld__host_block_free(pld_world *w, void *p)
{
    struct pld__host_blocks *b = blocks_of(w);
    if (!b)
        return pld__world_fail(w, PLD_ERR_NOMEM, "pld_host_free: out of memory");
    pthread_mutex_lock(&b->lock);
    host_block *h = find_block(b, p);
    pld_status st = PLD_OK;
    if (!h) {
        st = pld__world_fail(w, PLD_ERR_ARG,
                             "pld_host_free: %p is not a block of pld_host_alloc on this world "
                             "(memory from malloc, a window, another world, or freed long ago)",
                             p);
    } else if (h->freed_at) {
        st = pld__world_fail(w, PLD_ERR_ARG,
                             "pld_host_free: block %p (allocation #%llu, %zu bytes) was already "
                             "freed",
                             p, (unsigned long long)h->gen, h->bytes);
    } else {
        h->freed_at = ++b->frees;
        b->nfreed++;
        b->freed_bytes += h->bytes;
        release_oldest(w, b);
    }
    pthread_mutex_unlock(&b->lock);
    return st;
}

void pld__host_blocks_release(pld_world *w)
{
    struct pld__host_blocks *b = w->hblocks;
    if (!b)
        return;
    for (int i = 0; i < b->n; i++)
        w->tp->host_free(w, b->v[i].p);
    free(b->v);
    pthread_mutex_destroy(&b->lock);
    free(b);
    w->hblocks = NULL;
}
