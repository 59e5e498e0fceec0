/* SPDX-License-Identifier: Apache-2.0 */
/* The protocol picture (--ir-svg FILE, PLD_IR_SVG, pld_config.ir_svg): what
 * every rank records, and what the host draws from it.
 *
 * Every rank's core 0 keeps its own list of communication events -- puts
 * and gets with their bytes and peer, notifies, waits, builtin call
 * boundaries -- in program order, with no clock: the picture is laid out
 * in logical order, so it is the same on every run and on every transport.
 * When the rank's kernel ends it writes the list to a part file next to the
 * picture (<FILE>.part.<rank>); after the launch the host reads every part,
 * matches notifies to the waits they satisfy and draws the launch
 * (src/trace/ir_svg.c). Nothing is recorded unless the option is set. */
#ifndef PLD_TRACE_IR_REC_H
#define PLD_TRACE_IR_REC_H

#include "core/internal.h"
#include "trace/text.h"

typedef enum pld__rec_kind {
    PLD__REC_PUT,    /* this rank wrote `bytes` into `peer`'s window */
    PLD__REC_GET,    /* this rank read `bytes` from `peer`'s window */
    PLD__REC_NOTIFY, /* signal cell (win, off) at `peer` updated by value (op) */
    PLD__REC_WAIT,   /* this rank waited on its own cell (win, off) */
    PLD__REC_CALL,   /* a builtin call starts (name) */
    PLD__REC_RET,    /* the innermost open builtin call returns */
} pld__rec_kind;

/* One event: plain numbers and text, written to a part file as they are. */
typedef struct pld__rec_ev {
    int32_t kind;   /* pld__rec_kind */
    int32_t peer;   /* world rank: the target of a put or notify, the source of a get */
    int32_t win;    /* window id (the signal of a notify or wait) */
    int32_t value;  /* notify: the value; wait: the expected value */
    int32_t op;     /* notify: pld_notify_op; wait: pld_wait_cmp; put: pld_atomic */
    int32_t depth;  /* builtin nesting */
    int64_t off;    /* notify, wait: the cell's byte offset in the rank's slice */
    int64_t bytes;  /* put, get */
    char name[112]; /* window or signal name; call: the builtin (and its team) */
    char cell[24];  /* notify, wait: the cell's coordinates, "[1,0]" */
} pld__rec_ev;

/* ---- recording (every rank; src/trace/ir_rec.c) ------------------------- */

struct pld__rec *pld__rec_open(void);
/* Writes the agent's events to its part file and frees the recorder. */
void pld__rec_close(pld_ctx *c);
/* The events; callers test c->rec first (one branch when off). */
void pld__rec_xfer(pld_ctx *c, pld__rec_kind kind, int peer, const pld_window_buffer *buf,
                   int64_t bytes, int atomic);
void pld__rec_notify(pld_ctx *c, int peer, const pld_window_buffer *sig, size_t off,
                     const int64_t *coords, int ndim, int32_t value, int op);
void pld__rec_wait(pld_ctx *c, const pld_window_buffer *sig, size_t off, const int64_t *coords,
                   int ndim, int32_t expected, int cmp);
void pld__rec_call(pld_ctx *c, const char *api);
/* The bytes of a region of nd dims of extent ext. */
static inline int64_t pld__rec_bytes(int nd, const int64_t *ext, size_t esz)
{
    int64_t b = (int64_t)esz;
    for (int i = 0; i < nd; i++)
        b *= ext[i];
    return b;
}
void pld__rec_return(pld_ctx *c);

/* The part file of a rank, and reading one back (host): *ev is malloc'ed,
 * NULL with *n = 0 when the part is missing. Returns 0, or -1 when the part
 * exists but cannot be read whole. */
void pld__rec_part_path(const pld_world *w, int rank, char *out, size_t n);
int pld__rec_read_part(const char *path, pld__rec_ev **ev, int64_t *n, int64_t *dropped);

/* ---- the picture (host; src/trace/ir_svg.c) ----------------------------- */

/* World init, once the transport runs: an empty picture is written (so an
 * unwritable path is PLD_ERR_ARG now); a process that hosts only some ranks
 * (mpi) says on stderr that it draws nothing and turns the option off. */
pld_status pld__svg_world_ready(pld_world *w);
/* Host, after a launch with status st: draw it and rewrite the file.
 * Returns st, or PLD_ERR_SYSTEM when st is PLD_OK and the file could not be
 * written. */
pld_status pld__svg_flush(pld_world *w, pld_status st);
void pld__svg_free(pld_world *w);

/* The drawing itself, from every rank's events (src/trace/ir_svg_draw.c):
 * appends one launch's <g> section to out and returns its height; *width
 * receives its width. */
typedef pld__text pld__svg_text;
#define pld__svg_printf pld__text_printf
/* Appends s with &, <, >, " escaped. */
void pld__svg_escape(pld__svg_text *t, const char *s);
int pld__svg_draw_launch(pld__svg_text *out, int y0, const char *title, int nranks,
                         const int *devices, pld__rec_ev *const *ev, const int64_t *n,
                         const int64_t *dropped, int *width);

#endif
