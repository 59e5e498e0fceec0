/* SPDX-License-Identifier: Apache-2.0 */
/* A growable NUL-terminated text buffer: the listing (trace/ir.c), the
 * protocol picture (trace/ir_svg_draw.c) and the merged trace
 * (trace/trace_merge.c) are built in one. Out of memory drops the text
 * being added, never what is there. Standard headers only: the pld tool
 * compiles it in with the trace merge. */
#ifndef PLD_TRACE_TEXT_H
#define PLD_TRACE_TEXT_H

#include <stddef.h>

typedef struct pld__text {
    char *s; /* NULL until the first append */
    size_t n, cap;
} pld__text;

/* 0, or -1 when out of memory (s was not added). */
int pld__text_add(pld__text *t, const char *s, size_t n);
/* At most 1023 characters per call. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 2, 3)))
#endif
void pld__text_printf(pld__text *t, const char *fmt, ...);

#endif
