/* SPDX-License-Identifier: Apache-2.0 */
/* The trace export and the lowering recorder: what the hook layer and the
 * primitives call to record a kernel. */
#ifndef PLD_TRACE_H
#define PLD_TRACE_H

#include "core/internal.h"

/* ---- trace export (src/trace/trace.c) --------------------------------------- */

pld__trace_buf *pld__trace_open(void);
/* The buffer of core `core` for one multi-core call of the rank whose
 * buffer is rank_buf: from the second call of a launch on, its events are
 * added to that core's part file instead of replacing the earlier call's. */
pld__trace_buf *pld__trace_open_core(pld__trace_buf *rank_buf, int core);
/* Writes the agent's events to its part file and frees the buffer; a
 * failed write fails the launch (PLD_ERR_SYSTEM naming the file). */
void pld__trace_close(pld_ctx *c);
/* World init, once the transport runs: writes an empty trace and probes a
 * part file, so an unwritable trace path is PLD_ERR_ARG here (message for
 * pld_last_error) instead of a trace that never appears. */
pld_status pld__trace_world_ready(pld_world *w);
/* Host, after a launch whose status is st: merge the parts and rewrite the
 * trace file. Returns st, or when st is PLD_OK, PLD_ERR_SYSTEM (NOMEM) if
 * the file could not be written (merged) -- w->errmsg names the file. */
pld_status pld__trace_flush(pld_world *w, pld_status st);
/* A slice: t0 = pld__trace_begin(c); ... pld__trace_end(c, "pld_put", t0, bytes).
 * Free when tracing is off (one branch). */
uint64_t pld__trace_begin(const pld_ctx *c);
void pld__trace_end(pld_ctx *c, const char *name, uint64_t t0, int64_t bytes);
/* A notify (kind 0) or a wait that blocked (kind 1) on the cell at byte
 * offset `off` of rank `wrank`'s slice of buf: a slice that records the
 * cell and the value the notify left there or the wait read, from which
 * the host draws the flow arrow notify -> wait. */
void pld__trace_signal(pld_ctx *c, const char *name, uint64_t t0, int kind,
                       const pld_window_buffer *buf, int wrank, size_t off, int32_t value);
/* World finalize, before the transport goes: under mpi rank 0 merges the
 * per-rank files into the trace when it can read them all; frees the
 * trace's host state. */
void pld__trace_world_end(pld_world *w);
/* A zero-length slice named after an algorithm choice ("auto: rs_ag",
 * a static string) with the predicted time in its args. */
void pld__trace_choice(pld_ctx *c, const char *name, double predicted_us);
/* A "urma.send" slice carrying the queue model's numbers for one peer. */
void pld__trace_urma(pld_ctx *c, int peer, int64_t rows, int64_t sqes, int64_t wqebbs, int64_t nops,
                     int64_t doorbells, uint64_t t0);

/* ---- the lowering recorder (src/trace/ir.c) ---------------------------- */

pld__ir *pld__ir_new(void);
void pld__ir_free(pld__ir *ir);
void pld__ir_reset(pld__ir *ir);
/* Appends one operation line at the current nesting depth. */
void pld__ir_emit(pld__ir *ir, int depth, const char *fmt, ...) PLD__PRINTF(3, 4);
/* Folds and renders the listing; the string is owned by ir. */
const char *pld__ir_render(pld__ir *ir);

#endif
