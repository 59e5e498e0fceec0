/* SPDX-License-Identifier: Apache-2.0 */
/* The wait policy: the one loop every pld_wait that does not find its
 * condition met at once runs, whatever the transport. Transports only load
 * the cell (signal_load), sleep (sleep_prepare / sleep / sleep_end), wake a
 * rank (inside signal_update and abort) and report failures only they can
 * see (peer_failed); see src/transport/transport.h.
 *
 * Phases:
 *   spin   up to w->spin polls with a PAUSE between them; a look at the
 *          transport's failure report and the clock every 64. The budget
 *          adapts per agent (ag->spin_cut): w->spin >> spin_cut polls, from
 *          w->spin down to w->spin / 32. A wait the spin met doubles the
 *          budget back toward w->spin; one it did not meet halves it, so a
 *          rank whose peers are descheduled, share its CPU or copy for long
 *          stops spending its timeslice on polls.
 *          Ranks may share a CPU even when there are enough CPUs (the
 *          scheduler put both on one after a wake-up or a fork). Where every
 *          agent is visible (PLD__TP_CAP_DEADLOCK) each publishes
 *          sched_getcpu() in ag->cpu; every 64 polls the spinner looks
 *          whether another running agent of the world last waited on its
 *          CPU and, if so, yields it at once (after SHARED_SLEEP_AFTER
 *          such waits in a row it sleeps instead, so that the notify's
 *          wake-up can place it on another CPU). Otherwise it never yields
 *          while spinning: a yield hands the CPU to whatever else is
 *          runnable, and against a foreign process that costs a whole
 *          timeslice (milliseconds) during which the notify cannot preempt
 *          it. Transports without that view (mpi) yield every 256 polls.
 *   yield  w->yields rounds of sched_yield + poll: oversubscribed, the rank
 *          we wait for is usually runnable on our core, and handing it the
 *          core (a microsecond) beats sleeping and being woken (several).
 *          A cell that changed without meeting the wait (a count of
 *          arrivals) is polled while it keeps changing (follow_progress):
 *          the arrivals then come from other CPUs, and a yield would put
 *          the rank behind its whole CPU's queue.
 *   sleep  publish the wait for the deadlock report, then rounds of:
 *          register as a sleeper (sleep_prepare), mark the agent BLOCKED,
 *          re-check the cell and the abort status, sleep, unregister.
 *          A transport that wakes (PLD__TP_CAP_WAKE) sleeps in slices of
 *          SLEEP_SLICE_NS (longer in worlds of more than SLICE_RANKS), after
 *          each quiet one of which the deadlock detector runs
 *          (PLD__TP_CAP_DEADLOCK) unless another sleeper ran it in the
 *          last half slice; one that cannot wake keeps
 *          yielding for YIELD_WINDOW_NS from the start of the wait, then
 *          naps from NAP_FIRST_NS, doubling up to NAP_MAX_NS.
 * Every phase ends the wait on the group's abort (PLD_ERR_PEER), a peer
 * failure the transport reports (PLD_ERR_PEER, recorded in abort_status so
 * this rank's other cores leave too) and the deadline (PLD_ERR_TIMEOUT);
 * and, in a builtin's first round, on a left neighbour that published a
 * different call (PLD_ERR_ARG: the caller names the difference), which
 * ranks on different protocols would otherwise wait for until the
 * deadline where no deadlock detector runs.
 *
 * No lost wake-ups: sleep_prepare reads the rank's wake ticket, registers
 * the sleeper and fences; the re-check that follows either sees the notify,
 * or the notifier (update, then look at the sleepers) saw the sleeper and
 * bumped the ticket, so sleep returns at once. Aborts bump every ticket
 * after storing the abort status, which the re-check reads. */
#include <sched.h>

#include "check/agree.h"
#include "check/check.h"
#include "check/explore.h"
#include "core/team.h"
#include "prim/wait.h"
#include "transport/thread/fiber.h"

/* Waking transports: how often a sleeper looks at deadline and deadlock
 * (detection is promised within 200 ms), up to SLICE_RANKS ranks; beyond,
 * the slice grows with the world (sleep_slice_ns), and the detector runs
 * at most once per half slice in the whole world (detect_turn): every
 * check reads every rank's state, and thousands of sleepers each checking
 * every slice took all the CPUs from the ranks they waited for (P = 4096:
 * a barrier in which rank 0 released 2102 ranks in 60 s). */
#define SLEEP_SLICE_NS 50000000ull
#define SLICE_RANKS 256
/* Transports without a wake-up: yield this long, then nap, growing. */
#define YIELD_WINDOW_NS 2000000ull
#define NAP_FIRST_NS 1000ull
#define NAP_MAX_NS 200000ull
/* Spin polls between two looks at the transport's failure report and the
 * clock (an MPI call, a clock read: cheap, not free). */
#define CHECK_EVERY 64
/* The adaptive spin: the budget is w->spin >> spin_cut, spin_cut in
 * 0 .. SPIN_CUT_MAX (2000 polls are 60-200 us here, PAUSE ~40 ns plus the
 * load; 62 polls a few us). */
#define SPIN_CUT_MAX 5
/* A rank that found a peer on its CPU at the start of this many waits in a
 * row sleeps instead of yielding: yields keep both runnable on one CPU,
 * where the load balancer may leave them for good (a P=2 barrier 0.6-0.9 us
 * instead of 0.25), while the notify's wake-up places the sleeper on an
 * idle CPU. */
#define SHARED_SLEEP_AFTER 4
/* The yield phase polls a changing count until this many hand-overs of
 * a CPU (the measured handover_us) pass without a change. */
#define PROGRESS_GAP_HANDOVERS 3
/* ... and only where a turn of the CPU's queue is this many such gaps
 * (16 ranks per CPU): with a few ranks per CPU the poll only keeps the CPU
 * from the rank that would arrive next (P = 4 on two CPUs: barrier 3.4 us
 * before, 3.8 with the poll). */
#define PROGRESS_MIN_GAPS 5
/* Without a view of the other agents' CPUs: a blind yield every this many
 * polls. */
#define BLIND_YIELD_EVERY 256

static inline int cell_ok(pld_ctx *c, const pld__wait_desc *wd)
{
    return pld__wait_satisfied(c->tp->signal_load(c, wd->buf, wd->off), wd->expected, wd->cmp);
}

/* A failure only the transport can see (MPI: a peer's abort). Recorded in
 * abort_status so this rank's other cores leave too; the launch finds the
 * root cause. */
static int peer_failed(pld_ctx *c)
{
    if (PLD__LIKELY(!c->tp->peer_failed(c)))
        return 0;
    int32_t zero = 0;
    atomic_compare_exchange_strong(&c->sh->abort_status, &zero, (int32_t)PLD_ERR_PEER);
    return 1;
}

void pld__wait_publish(const pld_ctx *c, const pld__wait_desc *wd)
{
    pld__wait_rec *rec = &c->ag->wait;
    /* a view's wait names its team and group rank too */
    atomic_store_explicit(&rec->team, c->team ? (int32_t)c->team->serial : -1,
                          memory_order_relaxed);
    atomic_store_explicit(&rec->team_rank, c->rank, memory_order_relaxed);
    atomic_store_explicit(&rec->buf_id, wd->buf->id, memory_order_relaxed);
    atomic_store_explicit(&rec->cmp, (int32_t)wd->cmp, memory_order_relaxed);
    atomic_store_explicit(&rec->expected, wd->expected, memory_order_relaxed);
    atomic_store_explicit(&rec->ndim, wd->ndim, memory_order_relaxed);
    atomic_store_explicit(&rec->off, (int64_t)wd->off, memory_order_relaxed);
    for (int i = 0; i < wd->ndim; i++)
        atomic_store_explicit(&rec->coords[i], wd->coords[i], memory_order_relaxed);
}

/* Publishes this agent's CPU (+1: 0 means not known yet) and returns it;
 * stores only when it changed, so readers keep their cached line. */
static int32_t publish_cpu(pld_ctx *c)
{
    int32_t cpu = (int32_t)sched_getcpu() + 1;
    if (atomic_load_explicit(&c->ag->cpu, memory_order_relaxed) != cpu)
        atomic_store_explicit(&c->ag->cpu, cpu, memory_order_relaxed);
    return cpu;
}

/* Another running agent of the world last waited on this CPU: it is
 * runnable here, or spinning here, and our spin only delays it. A hint (the
 * published CPUs are as old as each agent's last wait), never a verdict. */
static int cpu_shared(const pld_ctx *c, int32_t cpu)
{
    pld__world_shared *sh = c->sh;
    pld__agent *base = pld__agent_at(sh, 0, 0);
    int n = sh->nranks * sh->cores;
    for (int i = 0; i < n; i++) {
        pld__agent *a = &base[i];
        if (a != c->ag && atomic_load_explicit(&a->cpu, memory_order_relaxed) == cpu &&
            atomic_load_explicit(&a->state, memory_order_relaxed) == PLD__RS_RUNNING)
            return 1;
    }
    return 0;
}

/* After a wait the spin did not meet: halve the budget. Whatever the
 * reason -- the peer is descheduled, shares this CPU, or copies for long --
 * more polls would only have taken CPU from it; a wait the spin meets
 * doubles the budget back. (Growing it again after a sleep that ended soon,
 * as an earlier rule did, kept two ranks on one CPU spinning their whole
 * budget, ~50 us, before every hand-over.) */
static void spin_adapt(pld__agent *ag)
{
    if (ag->spin_cut < SPIN_CUT_MAX)
        ag->spin_cut++;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The sleep slice of a world of nranks ranks: SLEEP_SLICE_NS up to
 * SLICE_RANKS, in proportion beyond (200 ms at 1024, 800 ms at 4096), so
 * that the world's sleepers wake about as often in all as SLICE_RANKS do. */
static uint64_t sleep_slice_ns(int nranks)
{
    return nranks > SLICE_RANKS ? SLEEP_SLICE_NS * (uint64_t)nranks / SLICE_RANKS : SLEEP_SLICE_NS;
}

/* 1 when this sleeper takes the world's next deadlock check: none started
 * in the last half slice. A deadlock leaves every rank asleep, so some
 * sleeper's next quiet slice finds the turn free. */
static int detect_turn(pld__world_shared *sh, uint64_t now, uint64_t slice)
{
    uint64_t next = atomic_load_explicit(&sh->detect_next_ns, memory_order_relaxed);
    return now >= next &&
           atomic_compare_exchange_strong(&sh->detect_next_ns, &next, now + slice / 2);
}

/* What ends a wait whose cell is not met yet: the group's abort or a
 * failure the transport reports (PLD_ERR_PEER), a left neighbour that
 * published a different call (PLD_ERR_ARG), the deadline (PLD_ERR_TIMEOUT);
 * PLD_OK when none did. */
static pld_status wait_cut(pld_ctx *c, uint64_t now, uint64_t deadline)
{
    if (pld__aborted(c) || peer_failed(c))
        return PLD_ERR_PEER;
    if (pld__agree_differs(c))
        return PLD_ERR_ARG;
    if (now >= deadline)
        return PLD_ERR_TIMEOUT;
    return PLD_OK;
}

/* The yield phase found the cell changed but not met: a count of
 * arrivals that grows (a gather's root). Other ranks of this CPU ran
 * during the yield, but while this rank keeps the CPU none of them can
 * notify it, so whatever arrives now comes from ranks running on the
 * other CPUs. Yielding would put this rank behind every runnable rank of
 * its CPU, a whole turn of them (P = 1024 on two CPUs: 512 hand-overs,
 * about a millisecond), although the arrivals it lacks are on their way;
 * so it polls while the cell keeps changing, and yields as soon as
 * PROGRESS_GAP_HANDOVERS hand-overs pass without a change (the ranks it
 * still waits for are then queued on its own CPU) or a turn of the
 * queue's length has passed. Returns the cell's last value. */
static int32_t follow_progress(pld_ctx *c, const pld__wait_desc *wd, int32_t v)
{
    const pld_tune *t = &c->sh->tune;
    double handover_ns = t->handover_us > 0 ? t->handover_us * 1000 : 1000;
    int cpus = t->cpus > 0 ? t->cpus : 1;
    uint64_t gap = (uint64_t)(PROGRESS_GAP_HANDOVERS * handover_ns);
    uint64_t turn = (uint64_t)((double)c->sh->nranks / cpus * handover_ns);
    if (turn < PROGRESS_MIN_GAPS * gap)
        return v; /* a short queue: its turn comes soon anyway */
    uint64_t start = pld__now_ns(), last = start;
    for (int i = 1;; i++) {
        pld__cpu_relax();
        int32_t u = c->tp->signal_load(c, wd->buf, wd->off);
        if (pld__wait_satisfied(u, wd->expected, wd->cmp))
            return u;
        if (pld__aborted(c))
            return u;
        if ((i & (CHECK_EVERY - 1)) || u != v) {
            if (u != v) {
                v = u;
                last = pld__now_ns();
            }
            continue;
        }
        uint64_t now = pld__now_ns();
        if (now - last > gap || now - start > turn)
            return v;
    }
}

/* A rank run as a user-level context (PLD_FIBERS, transport/thread/fiber.c):
 * no spin and no sleep, each look at the cell that fails hands the carrier
 * thread to its next rank (a spin would only delay the ranks sharing the
 * thread; a sleep would stop them all). The rank counts as blocked for the
 * deadlock detector from the start: until the wait ends it does nothing
 * but look at its cell, as a sleeper does, and the detector checks the cell
 * itself. Returns 0 when the other ranks of the carrier have all returned
 * meanwhile: the caller goes on waiting as a thread (see pld__wait_policy);
 * else 1, the wait's status in *out. */
static int fiber_wait(pld_ctx *c, const pld__wait_desc *wd, uint64_t deadline, pld_status *out)
{
    pld__agent *ag = c->ag;
    uint64_t slice = sleep_slice_ns(c->sh->nranks);
    uint64_t next_check = pld__now_ns() + slice;
    pld_status st = PLD_OK;
    int ended = 1;
    pld__wait_publish(c, wd);
    atomic_store_explicit(&ag->state, PLD__RS_BLOCKED, memory_order_seq_cst);
    for (int first = 1;; first = 0) {
        pld__fiber_yield(!first);
        if (cell_ok(c, wd))
            break;
        if (pld__fiber_alone()) {
            ended = 0;
            break;
        }
        uint64_t now = pld__now_ns(); /* ~20 ns beside a switch of ~350 */
        if ((st = wait_cut(c, now, deadline)) != PLD_OK)
            break;
        if (now >= next_check) {
            next_check = now + slice;
            if (detect_turn(c->sh, now, slice) && pld__deadlock_check(c->w)) {
                st = PLD_ERR_PEER; /* the report is the group's root cause */
                break;
            }
        }
    }
    atomic_store_explicit(&ag->state, PLD__RS_RUNNING, memory_order_seq_cst);
    *out = st;
    return ended;
}

pld_status pld__wait_policy(pld_ctx *c, const pld__wait_desc *wd)
{
    /* under the schedule explorer's serial mode nothing spins or sleeps:
     * the wait hands the token on until the cell is met */
    if (PLD__UNLIKELY(c->sched_on) && pld__sched_serial(c))
        return pld__sched_wait(c, wd);
    const pld_transport_ops *tp = c->tp;
    pld_world *w = c->w;
    uint64_t start = pld__now_ns();
    uint64_t deadline = start + (uint64_t)w->wait_timeout_ms * 1000000u;
    /* a rank alone on its carrier waits as a thread: a spin meets a peer
     * on another CPU sooner than yields (P = 2 on two carriers: barrier
     * 0.49 us against 0.31 with threads) */
    pld_status fst;
    if (PLD__UNLIKELY(pld__fiber_running()) && !pld__fiber_alone() &&
        fiber_wait(c, wd, deadline, &fst))
        return fst;

    /* ---- spin ----------------------------------------------------------- */
    pld__agent *ag = c->ag;
    int spin = w->spin >> ag->spin_cut;
    /* every agent is visible: its CPU for the spin, its wait for the detector */
    int see = (tp->caps & PLD__TP_CAP_DEADLOCK) != 0;
    int32_t cpu = see && spin > 0 ? publish_cpu(c) : 0;
    int to_sleep = 0;
    for (int i = 0; i < spin; i++) {
        if (cell_ok(c, wd)) {
            if (ag->spin_cut > 0)
                ag->spin_cut--;
            return PLD_OK;
        }
        if (pld__aborted(c))
            return PLD_ERR_PEER;
        if ((i & (CHECK_EVERY - 1)) == 0 && see) {
            if (i && (i & (BLIND_YIELD_EVERY - 1)) == 0)
                cpu = publish_cpu(c);
            if (cpu_shared(c, cpu)) {
                if (i == 0 && ++ag->shared_run >= SHARED_SLEEP_AFTER) {
                    ag->shared_run = 0;
                    to_sleep = 1; /* the wake-up may place us elsewhere */
                    break;
                }
                sched_yield();
                cpu = publish_cpu(c);
                continue;
            }
            if (i == 0)
                ag->shared_run = 0;
        }
        if ((i & (CHECK_EVERY - 1)) == CHECK_EVERY - 1) {
            if (peer_failed(c))
                return PLD_ERR_PEER;
            if (pld__agree_differs(c))
                return PLD_ERR_ARG;
            if (pld__now_ns() >= deadline)
                return PLD_ERR_TIMEOUT;
        }
        pld__cpu_relax();
        if (!see && (i & (BLIND_YIELD_EVERY - 1)) == BLIND_YIELD_EVERY - 1)
            sched_yield();
    }
    int spun = spin > 0; /* the spin ran out or left: adapt after the wait */
    int yields = to_sleep ? 0 : w->yields;

    /* ---- yield ---------------------------------------------------------- */
    int32_t seen = tp->signal_load(c, wd->buf, wd->off);
    for (int i = 0; i < yields; i++) {
        sched_yield();
        int32_t v = tp->signal_load(c, wd->buf, wd->off);
        if (v != seen && !pld__wait_satisfied(v, wd->expected, wd->cmp))
            v = follow_progress(c, wd, v);
        seen = v;
        if (pld__wait_satisfied(v, wd->expected, wd->cmp)) {
            if (spun)
                spin_adapt(ag);
            return PLD_OK;
        }
        pld_status cut = wait_cut(c, pld__now_ns(), deadline);
        if (cut != PLD_OK)
            return cut;
    }

    /* ---- sleep ---------------------------------------------------------- */
    int wakes = (tp->caps & PLD__TP_CAP_WAKE) != 0;
    uint64_t nap = NAP_FIRST_NS, slice = sleep_slice_ns(c->sh->nranks);
    pld__wait_publish(c, wd);
    for (;;) {
        uint64_t now = pld__now_ns();
        uint64_t left = deadline > now ? deadline - now : 0;
        uint32_t ticket = tp->sleep_prepare(c);
        atomic_store_explicit(&ag->state, PLD__RS_BLOCKED, memory_order_seq_cst);
        int done = cell_ok(c, wd);
        int aborted = atomic_load_explicit(&c->sh->abort_status, memory_order_seq_cst) != 0;
        int quiet = 0; /* a whole slice passed without a wake-up */
        if (!done && !aborted) {
            if (wakes) {
                quiet = tp->sleep(c, ticket, min_u64(slice, left));
            } else if (now - start < YIELD_WINDOW_NS) {
                sched_yield();
            } else {
                quiet = tp->sleep(c, ticket, min_u64(nap, left));
                nap = min_u64(nap * 2, NAP_MAX_NS);
            }
        }
        atomic_store_explicit(&ag->state, PLD__RS_RUNNING, memory_order_seq_cst);
        tp->sleep_end(c);
        if (done || (!aborted && cell_ok(c, wd))) {
            if (spun)
                spin_adapt(ag);
            return PLD_OK;
        }
        if (aborted)
            return PLD_ERR_PEER;
        if (peer_failed(c))
            return PLD_ERR_PEER;
        if (pld__agree_differs(c))
            return PLD_ERR_ARG;
        if (quiet && see && detect_turn(c->sh, pld__now_ns(), slice)) {
            /* Re-enter the blocked state for the check: the detector only
             * declares a deadlock when this agent is counted as blocked. */
            atomic_store_explicit(&ag->state, PLD__RS_BLOCKED, memory_order_seq_cst);
            int dead = pld__deadlock_check(w);
            atomic_store_explicit(&ag->state, PLD__RS_RUNNING, memory_order_seq_cst);
            if (dead)
                return PLD_ERR_PEER; /* the report is the group's root cause */
        }
        if (pld__now_ns() >= deadline)
            return PLD_ERR_TIMEOUT;
    }
}
