/* Agreement check: every rank must call the same builtin with agreeing
 * arguments. Each builtin describes its call in a fingerprint (which
 * builtin, windows, dtypes, shapes, op, mode, root, M, core_num); the rank
 * publishes it in its slot of a world-internal window before its first
 * notify, and after the call's first round -- when its left neighbour has
 * provably published (it notified us after writing) -- compares it with the
 * left neighbour's. If any two ranks differ, some pair of neighbours does,
 * so one comparison per rank per call finds every disagreement.
 *
 * Two slots per rank, by call parity: a neighbour can be at most one call
 * ahead (it cannot leave call k+1 before this rank entered it), so the slot
 * of call k is intact while this rank reads it.
 *
 * Off with PLD_CHECK=noargs. */
#ifndef PLD_AGREE_H
#define PLD_AGREE_H

#include "core/internal.h"

enum { PLD__FP_ARGS = 3 };

/* One window or tensor argument of a call. win: window id, -1 for a plain
 * tensor. rows_free: the first dim may differ between ranks (MoE inputs
 * hold each rank's own token count). */
typedef struct pld__fp_arg {
    int32_t win, dtype, ndim, rows_free;
    int64_t shape[PLD_MAX_DIMS];
} pld__fp_arg;

/* What peers read: plain numbers, the same in every process. */
typedef struct pld__fp_wire {
    uint64_t seq;        /* this rank's builtin call number, from 1 (0: none yet) */
    uint32_t launch;     /* the launch it belongs to */
    int32_t inflight;    /* 1 from entry to return */
    int32_t kind;        /* which builtin (index in agree.c's table) */
    int32_t pad;
    int32_t signal;      /* signal window id */
    int32_t op, mode, root, core_num; /* -1 where the builtin has none */
    int32_t nargs;
    int64_t m;           /* all_to_all_v block rows, -1 elsewhere */
    pld__fp_arg arg[PLD__FP_ARGS];
} pld__fp_wire;

typedef struct pld__coll_fp {
    pld__fp_wire wire;
    const char *api;
} pld__coll_fp;

/* Starts a fingerprint for builtin `api` on `signal`. */
void pld__fp_init(pld__coll_fp *fp, const char *api, pld_dtensor signal);
/* Window and tensor arguments, in the order of agree.c's table of builtins. */
void pld__fp_window(pld__coll_fp *fp, pld_dtensor t);
void pld__fp_tensor(pld__coll_fp *fp, pld_tensor t, int rows_free);

/* Allocates the fingerprint window at world init (unless PLD_CHECK=noargs). */
pld_status pld__agree_init(pld_world *w);

/* A rank's kernel starts / ends (its call numbering starts at 0). */
void pld__agree_rank_begin(pld_ctx *c);
void pld__agree_rank_end(pld_ctx *c);
/* Builtin entry: numbers the call and publishes its fingerprint. */
void pld__agree_publish(pld_ctx *c, const pld__coll_fp *fp);
/* After the call's first round: compares with the left neighbour (once). */
void pld__agree_verify(pld_ctx *c);
/* Builtin return: the call is no longer in flight. */
void pld__agree_leave(pld_ctx *c);
static inline void pld__agree_after_round(pld_ctx *c)
{
    if (PLD__UNLIKELY(c->agree_pending))
        pld__agree_verify(c);
}

/* Deadlock / timeout: if the blocked ranks' current calls disagree, writes
 * the mismatch ("rank 1: pld_allgather ... differs from rank 0's ...") into
 * out and returns 1. */
int pld__agree_explain(pld_world *w, char *out, size_t n);

/* After an aborted launch (host): clears the signal of every builtin that
 * was in flight, so the next launch does not take its leftover credits for
 * arrivals. Writes the cleared windows' names into out; returns how many. */
int pld__agree_after_abort(pld_world *w, char *out, size_t n);

#endif
