/* SPDX-License-Identifier: Apache-2.0 */
/* A growable NUL-terminated text buffer: the listing (trace/ir.c) and the
 * protocol picture (trace/ir_svg_draw.c) are built in one. Out of memory
 * drops the text being added, never what is there. */
#ifndef PLD_TRACE_TEXT_H
#define PLD_TRACE_TEXT_H

#include <stddef.h>

#include "core/internal.h"

typedef struct pld__text {
    char *s; /* NULL until the first append */
    size_t n, cap;
} pld__text;

void pld__text_add(pld__text *t, const char *s, size_t n);
/* At most 1023 characters per call. */
void pld__text_printf(pld__text *t, const char *fmt, ...) PLD__PRINTF(2, 3);

#endif
