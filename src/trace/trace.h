/* The trace export and the lowering recorder: what the hook layer and the
 * primitives call to record a kernel. */
#ifndef PLD_TRACE_H
#define PLD_TRACE_H

#include "core/internal.h"

/* ---- trace export (src/trace/trace.c) --------------------------------------- */

pld__trace_buf *pld__trace_open(void);
/* Writes the agent's events to its part file and frees the buffer. */
void pld__trace_close(pld_ctx *c);
/* Host, after a launch: merge the parts and rewrite the trace file. */
void pld__trace_flush(pld_world *w);
/* A slice: t0 = pld__trace_begin(c); ... pld__trace_end(c, "pld_put", t0, bytes).
 * Free when tracing is off (one branch). */
uint64_t pld__trace_begin(const pld_ctx *c);
void pld__trace_end(pld_ctx *c, const char *name, uint64_t t0, int64_t bytes);
/* A "urma.send" slice carrying the queue model's numbers for one peer. */
void pld__trace_urma(pld_ctx *c, int peer, int64_t rows, int64_t sqes, int64_t wqebbs,
                     int64_t nops, int64_t doorbells, uint64_t t0);

/* ---- the lowering recorder (src/trace/ir.c) ---------------------------- */

pld__ir *pld__ir_new(void);
void pld__ir_free(pld__ir *ir);
void pld__ir_reset(pld__ir *ir);
/* Appends one operation line at the current nesting depth. */
void pld__ir_emit(pld__ir *ir, int depth, const char *fmt, ...) PLD__PRINTF(3, 4);
/* Folds and renders the listing; the string is owned by ir. */
const char *pld__ir_render(pld__ir *ir);

#endif
