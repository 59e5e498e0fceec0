/* SPDX-License-Identifier: Apache-2.0 */
/* Growable text buffer: see text.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

int pld__text_add(pld__text *t, const char *s, size_t n)
{
    if (t->n + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->n + n + 1)
            cap *= 2;
        char *grown = realloc(t->s, cap);
        if (!grown)
            return -1;
        t->s = grown;
        t->cap = cap;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
    return 0;
}

void pld__text_printf(pld__text *t, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        pld__text_add(t, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}
