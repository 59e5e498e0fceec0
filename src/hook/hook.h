/* SPDX-License-Identifier: Apache-2.0 */
/* The hook layer: everything that watches a kernel -- the listing (--ir),
 * the trace, the race checker, the signal checker, the agreement check and
 * the schedule explorer -- is reached from the layers below through here.
 *
 * Which observers an agent has is decided once, when it starts (pld_ctx.obs,
 * src/hook/life.c); the checks below are single bit tests. Collectives ask
 * only what they must know to pick a path: whether someone watches every
 * primitive (pld__observed), never which checker it is. */
#ifndef PLD_HOOK_H
#define PLD_HOOK_H

#include <stdarg.h>

#include "core/internal.h"

/* ---- observers (pld_ctx.obs bits) ---------------------------------------- */

enum {
    PLD__OBS_LIST = 1u << 0,    /* rank 0 records the lowering listing */
    PLD__OBS_RACE = 1u << 1,    /* the race checker sees every access */
    PLD__OBS_TRACE = 1u << 2,   /* trace slices */
    PLD__OBS_SCHED = 1u << 3,   /* the schedule explorer */
    PLD__OBS_AGREE = 1u << 4,   /* the agreement check */
    PLD__OBS_SIGNALS = 1u << 5, /* the signal checker */
    PLD__OBS_SVG = 1u << 6,     /* every rank records the protocol picture (--ir-svg) */
    PLD__OBS_HAZARDS = 1u << 7, /* the hardware-hazard lints (src/check/hazards.c) */
};

/* 1 when every primitive must run as itself (the listing and the picture
 * show it, the race checker records its regions): fused fast paths are off. */
static inline int pld__observed(const pld_ctx *c)
{
    return (c->obs & (PLD__OBS_LIST | PLD__OBS_RACE | PLD__OBS_SVG)) != 0;
}

/* A line of the lowering listing at the current depth (nothing when rank 0
 * is not recording). */
void pld__note(pld_ctx *c, const char *fmt, ...) PLD__PRINTF(2, 3);
/* One modelled URMA send to a peer: its trace slice and listing line. */
void pld__note_urma(pld_ctx *c, int peer, int64_t rows, int64_t ranges, int64_t sqes,
                    int64_t wqebbs, int64_t nops, int64_t doorbells, int64_t cqes, uint64_t t0);
/* The start time of a slice, 0 when not tracing. */
uint64_t pld__slice_begin(const pld_ctx *c);

/* ---- builtin calls ---------------------------------------------------------- */

/* What a builtin call is, as the agreement check compares it across ranks:
 * which builtin, its signal and data windows with dtypes and shapes, op,
 * mode, root, M, core_num. */
enum { PLD__FP_ARGS = 3 };

/* One window or tensor argument. win: window id, -1 for a plain tensor.
 * rows_free: the first dim may differ between ranks (MoE inputs hold each
 * rank's own token count). */
typedef struct pld__fp_arg {
    int32_t win, dtype, ndim, rows_free;
    int64_t shape[PLD_MAX_DIMS];
} pld__fp_arg;

/* The builtins (the order of the table in src/hook/calls.c). */
typedef enum pld__kind {
    PLD__K_BARRIER,
    PLD__K_BROADCAST,
    PLD__K_ALLGATHER,
    PLD__K_ALLGATHER_INPLACE,
    PLD__K_REDUCE_SCATTER,
    PLD__K_ALLREDUCE,
    PLD__K_ALL_TO_ALL,
    PLD__K_ALL_TO_ALL_V,
    PLD__K_INDEXED_DISPATCH,
    PLD__K_INDEXED_COMBINE,
    PLD__K_MOE_DISPATCH,
    PLD__K_MOE_COMBINE,
    PLD__NKINDS
} pld__kind;

/* What peers read: plain numbers, the same in every process. Everything
 * before `inflight` is compared as one block of bytes (unused fields stay
 * zero). */
typedef struct pld__fp_wire {
    uint64_t seq;                     /* this rank's builtin call number, from 1 (0: none yet) */
    uint32_t launch;                  /* the launch it belongs to */
    int32_t kind;                     /* pld__kind */
    int32_t signal;                   /* signal window id */
    int32_t lanes;                    /* cells per rank of the signal view ([P] and [P,1]: 1) */
    int32_t op, mode, root, core_num; /* -1 where the builtin has none */
    int32_t nargs;
    int32_t ll_slot; /* the group's one-round threshold (PLD_LL_BYTES as sized), bit 0:
                        the push builtins use it (PLD_LL_BYTES set) */
    int64_t m;       /* all_to_all_v block rows, -1 elsewhere */
    pld__fp_arg arg[PLD__FP_ARGS];
    int32_t inflight; /* 1 from entry to return: not compared (the owner
                         clears it while a neighbour may be comparing) */
    int32_t pad;
} pld__fp_wire;

typedef struct pld__coll_fp {
    pld__fp_wire wire;
    const char *api;
} pld__coll_fp;

/* Starts a call description for builtin `kind` (public name `api`) on
 * `signal`. */
void pld__fp_init(pld__coll_fp *fp, pld__kind kind, const char *api, pld_dtensor signal);
/* Window and tensor arguments, in the order of the table of builtins. */
void pld__fp_window(pld__coll_fp *fp, pld_dtensor t);
void pld__fp_tensor(pld__coll_fp *fp, pld_tensor t, int rows_free);
/* The builtin's name for a kind, and the name of its argument i. */
const char *pld__fp_kind_name(int32_t kind);
const char *pld__fp_arg_name(int32_t kind, int i);

/* A builtin starts (after its argument checks, before its first notify):
 * the listing line "call api(args)", the scope for messages and the trace,
 * the agreement check's publication, the signal checker. */
void pld__call_enter(pld_ctx *c, const char *api, pld_dtensor signal, const pld__coll_fp *fp,
                     const char *fmt, va_list ap);
/* Its first round is complete: every peer has entered the call. */
void pld__call_round_slow(pld_ctx *c);
static inline void pld__call_round(pld_ctx *c)
{
    if (PLD__UNLIKELY(c->agree_pending)) /* set only while the agreement check waits */
        pld__call_round_slow(c);
}
/* It returns. */
void pld__call_leave(pld_ctx *c, pld_dtensor signal);
/* A wait in a builtin timed out: if ranks in the same call disagree
 * (where their descriptions can be read from here), writes that
 * disagreement into out and returns 1. Ranks in different calls are not
 * named: after a timeout one of them may only be slow. */
int pld__call_explain_stuck(pld_world *w, char *out, size_t n);

#endif
