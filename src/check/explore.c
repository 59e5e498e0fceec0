/* SPDX-License-Identifier: Apache-2.0 */
/* The schedule explorer: see explore.h. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check/check.h"
#include "check/explore.h"
#include "prim/wait.h"

enum { MODE_OFF = 0, MODE_SERIAL = 1, MODE_PERTURB = 2 };

/* What the scheduler knows of an agent. */
enum { AG_NONE = 0, AG_READY, AG_WAITING, AG_JOINING, AG_DONE };

typedef struct sched_agent {
    int state;
    pld__wait_desc wd; /* AG_WAITING: what it waits for */
    int sleeping;      /* asleep on cv (else yielding, about to look again) */
    pthread_cond_t cv; /* signalled when the token comes to it */
} sched_agent;

/* Serial mode: one token, handed from agent to agent under one lock. */
struct pld__sched {
    pthread_mutex_t mu;
    int nagents, cores;
    _Atomic int turn; /* agent holding the token; -1 while none runs */
    uint64_t rng;
    unsigned stay; /* keep the running agent with probability 1 - 1/stay */
    pld_world *w;
    sched_agent ag[];
};

/* splitmix64: small, good enough, and the same everywhere */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

pld_status pld__sched_init(pld_world *w)
{
    char msg[512];
    pld__setting_value v;
    w->sched_mode = MODE_OFF;
    if (pld__setting_read(PLD__S_SCHED, &v, msg, sizeof msg) != PLD_OK)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init: %s", msg);
    if (!v.from_env)
        return PLD_OK;
    w->sched_seed = v.seed;
    if (!strcmp(w->tp->name, "process")) {
        w->sched_mode = MODE_PERTURB;
        return PLD_OK;
    }
    if (strcmp(w->tp->name, "thread"))
        return pld__init_fail(PLD_ERR_UNSUPPORTED,
                              "pld_world_init: the schedule explorer (PLD_SCHED) runs on the "
                              "thread and process transports, not '%s'",
                              w->tp->name);
    int cores = w->profile.aiv_cores, n = w->nranks * cores;
    struct pld__sched *s = calloc(1, sizeof *s + sizeof s->ag[0] * (size_t)n);
    if (!s)
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    pthread_mutex_init(&s->mu, NULL);
    for (int i = 0; i < n; i++)
        pthread_cond_init(&s->ag[i].cv, NULL);
    s->nagents = n;
    s->cores = cores;
    s->turn = -1;
    s->w = w;
    w->sched = s;
    w->sched_mode = MODE_SERIAL;
    return PLD_OK;
}

void pld__sched_fini(pld_world *w)
{
    struct pld__sched *s = w->sched;
    if (!s)
        return;
    for (int i = 0; i < s->nagents; i++)
        pthread_cond_destroy(&s->ag[i].cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
    w->sched = NULL;
}

int pld__sched_serial(const pld_ctx *c)
{
    return c->w->sched_mode == MODE_SERIAL;
}

static int agent_of(const pld_ctx *c)
{
    return c->wrank * c->w->sched->cores + c->core;
}

static int wait_met(struct pld__sched *s, int i)
{
    pld__wait_desc *wd = &s->ag[i].wd;
    const unsigned char *p = s->w->tp->window_peer_ptr(s->w, wd->buf, i / s->cores);
    int32_t v =
        atomic_load_explicit((_Atomic int32_t *)(void *)(p + wd->off), memory_order_acquire);
    return pld__wait_satisfied(v, wd->expected, wd->cmp);
}

static int runnable(struct pld__sched *s, int i)
{
    switch (s->ag[i].state) {
    case AG_READY:
        return 1;
    case AG_WAITING: /* it returns once its cell is met, or the group aborted */
        return atomic_load(&s->w->sh->abort_status) != 0 || wait_met(s, i);
    case AG_JOINING: /* core 0 of a multi-core call: once its cores are done */
        for (int b = 1; b < s->cores; b++) {
            int st = s->ag[i + b].state;
            if (st != AG_NONE && st != AG_DONE)
                return 0;
        }
        return 1;
    default:
        return 0;
    }
}

/* The next agent to run (cur keeps running with probability 1 - 1/stay
 * when it can); -1 when none can. Called with the lock held. */
static int choose(struct pld__sched *s, int cur)
{
    if (cur >= 0 && runnable(s, cur) && next_rand(&s->rng) % s->stay != 0)
        return cur;
    int n = 0;
    for (int i = 0; i < s->nagents; i++)
        n += runnable(s, i);
    if (n == 0)
        return -1;
    int k = (int)(next_rand(&s->rng) % (uint64_t)n);
    for (int i = 0; i < s->nagents; i++)
        if (runnable(s, i) && k-- == 0)
            return i;
    return -1;
}

/* Nobody can run but some agent still waits: every wait it could be
 * released by is unmet, a deadlock. The detector writes the report (its
 * conditions hold: every waiter is marked blocked, no notify can come);
 * the abort then makes the waiters runnable. */
static int pick_or_deadlock(struct pld__sched *s, int cur)
{
    int next = choose(s, cur);
    if (next >= 0)
        return next;
    int waiting = 0;
    for (int i = 0; i < s->nagents; i++)
        waiting += s->ag[i].state == AG_WAITING || s->ag[i].state == AG_JOINING;
    if (!waiting)
        return -1; /* every agent finished */
    if (!pld__deadlock_check(s->w))
        pld__group_fail(s->w, PLD_ERR_DEADLOCK,
                        "deadlock: every rank is blocked (schedule explorer)");
    return choose(s, -1);
}

/* Yields to the token's holder this many times before sleeping: a thread
 * woken from a condition variable takes tens of microseconds to run on a
 * busy machine, one that yields picks the token up at its next turn. */
#define SCHED_YIELDS 64

/* Waits, with the lock held, until the token comes to `me`. */
static void await_turn(struct pld__sched *s, int me)
{
    for (int i = 0; i < SCHED_YIELDS && atomic_load(&s->turn) != me; i++) {
        pthread_mutex_unlock(&s->mu);
        sched_yield();
        pthread_mutex_lock(&s->mu);
    }
    while (atomic_load(&s->turn) != me) {
        s->ag[me].sleeping = 1;
        pthread_cond_wait(&s->ag[me].cv, &s->mu);
        s->ag[me].sleeping = 0;
    }
}

/* Gives the token to `next` (-1: nobody), waking it if it sleeps. */
static void give(struct pld__sched *s, int next)
{
    atomic_store(&s->turn, next);
    if (next >= 0 && s->ag[next].sleeping)
        pthread_cond_signal(&s->ag[next].cv);
}

/* Hands the token to `next` and waits until it comes back to `me`. */
static void hand_over(struct pld__sched *s, int me, int next)
{
    if (next == me)
        return;
    give(s, next);
    await_turn(s, me);
}

void pld__sched_launch_begin(pld_world *w)
{
    struct pld__sched *s = w->sched;
    if (!s)
        return;
    /* one launch, one stream of choices: the seed and the launch number */
    s->rng = w->sched_seed * 0x100000001b3ull + w->sh->launch_seq;
    /* how long an agent keeps running varies from seed to seed: switching
     * at every step keeps ranks in lockstep, long runs let one rank get
     * far ahead of a slow one (what most ordering bugs need) */
    static const unsigned stays[] = {1, 2, 4, 16, 64};
    uint64_t r = next_rand(&s->rng);
    s->stay = stays[r % (sizeof stays / sizeof stays[0])];
    for (int i = 0; i < s->nagents; i++)
        s->ag[i].state = i % s->cores == 0 ? AG_READY : AG_NONE;
    pthread_mutex_lock(&s->mu);
    atomic_store(&s->turn, choose(s, -1));
    pthread_mutex_unlock(&s->mu);
}

void pld__sched_launch_end(pld_world *w, pld_status st)
{
    if (w->sched_mode == MODE_OFF || st == PLD_OK)
        return;
    size_t n = strlen(w->errmsg);
    snprintf(w->errmsg + n, sizeof w->errmsg - n,
             " [schedule explorer: seed %llu; rerun with PLD_SCHED=%llu to replay%s]",
             (unsigned long long)w->sched_seed, (unsigned long long)w->sched_seed,
             w->sched_mode == MODE_SERIAL ? " it exactly"
                                          : " (the process transport perturbs, "
                                            "it does not replay)");
}

void pld__sched_agent_begin(pld_ctx *c)
{
    pld_world *w = c->w;
    if (w->sched_mode == MODE_PERTURB) {
        c->sched_on = 1;
        c->sched_rng =
            w->sched_seed * 0x100000001b3ull + (uint64_t)c->wrank * 7919u + w->sh->launch_seq;
        return;
    }
    struct pld__sched *s = w->sched;
    if (!s)
        return;
    c->sched_on = 1;
    int me = agent_of(c);
    pthread_mutex_lock(&s->mu);
    await_turn(s, me);
    pthread_mutex_unlock(&s->mu);
}

void pld__sched_agent_end(pld_ctx *c)
{
    struct pld__sched *s = c->w->sched;
    if (!s || !c->sched_on)
        return;
    int me = agent_of(c);
    pthread_mutex_lock(&s->mu);
    s->ag[me].state = AG_DONE;
    give(s, pick_or_deadlock(s, -1));
    pthread_mutex_unlock(&s->mu);
    c->sched_on = 0;
}

void pld__sched_core_ready(pld_ctx *c, int core)
{
    struct pld__sched *s = c->w->sched;
    if (!s || !c->sched_on)
        return;
    pthread_mutex_lock(&s->mu);
    s->ag[agent_of(c) - c->core + core].state = AG_READY;
    pthread_mutex_unlock(&s->mu);
}

void pld__sched_join_begin(pld_ctx *c)
{
    struct pld__sched *s = c->w->sched;
    if (!s || !c->sched_on)
        return;
    int me = agent_of(c);
    pthread_mutex_lock(&s->mu);
    s->ag[me].state = AG_JOINING;
    hand_over(s, me, pick_or_deadlock(s, -1));
    s->ag[me].state = AG_READY;
    pthread_mutex_unlock(&s->mu);
}

static void perturb(pld_ctx *c)
{
    uint64_t r = next_rand(&c->agent->sched_rng);
    switch (r % 8) {
    case 0:
    case 1:
        sched_yield();
        break;
    case 2: { /* a short sleep lets the other ranks run far ahead */
        struct timespec ts = {0, (long)((r >> 8) % 50000)};
        nanosleep(&ts, NULL);
        break;
    }
    default:
        break;
    }
}

void pld__sched_step(pld_ctx *c)
{
    struct pld__sched *s = c->w->sched;
    if (!s) {
        perturb(c);
        return;
    }
    int me = agent_of(c);
    pthread_mutex_lock(&s->mu);
    hand_over(s, me, pick_or_deadlock(s, me));
    pthread_mutex_unlock(&s->mu);
}

pld_status pld__sched_wait(pld_ctx *c, const pld__wait_desc *wd)
{
    struct pld__sched *s = c->w->sched;
    int me = agent_of(c);
    pld__wait_publish(c, wd); /* what the deadlock report shows */
    pthread_mutex_lock(&s->mu);
    s->ag[me].wd = *wd;
    s->ag[me].state = AG_WAITING;
    atomic_store(&c->ag->state, PLD__RS_BLOCKED);
    while (!runnable(s, me) || atomic_load(&s->turn) != me)
        hand_over(s, me, pick_or_deadlock(s, -1));
    s->ag[me].state = AG_READY;
    atomic_store(&c->ag->state, PLD__RS_RUNNING);
    pthread_mutex_unlock(&s->mu);
    return atomic_load(&c->sh->abort_status) != 0 && !wait_met(s, me) ? PLD_ERR_PEER : PLD_OK;
}
