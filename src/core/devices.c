/* SPDX-License-Identifier: Apache-2.0 */
/* Device-id lists: "0,1", "0-3", "4,5", "0-1,6-7". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/devices.h"
#include "core/settings.h"

/* Device ids are ints; anything larger is out of range, not wrapped. */
#define DEVICE_MAX 2147483647L

/* Reads one id; 0 if there is none, -1 if it is out of [0, DEVICE_MAX]. */
static int parse_num(const char **p, long *out)
{
    if (!isdigit((unsigned char)**p))
        return 0;
    char *end;
    errno = 0;
    *out = strtol(*p, &end, 10);
    int ok = errno != ERANGE && *out <= DEVICE_MAX;
    *p = end;
    return ok ? 1 : -1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The smallest id that appears twice, -1 if none, -2 out of memory:
 * sorted, so that a list of thousands of devices costs n log n, not n^2. */
static long first_duplicate(const int *ids, int n)
{
    int *sorted = malloc(sizeof *sorted * (size_t)(n ? n : 1));
    if (!sorted)
        return -2;
    memcpy(sorted, ids, sizeof *sorted * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_int);
    long twice = -1;
    for (int i = 1; i < n && twice < 0; i++)
        if (sorted[i] == sorted[i - 1])
            twice = sorted[i];
    free(sorted);
    return twice;
}

pld_status pld__devices_parse(const char *spec, int **ids_out, int *n_out, char *msg, size_t msgsz)
{
    int cap = 16, n = 0;
    int max = (int)pld__setting_num(PLD__S_MAX_RANKS);
    int *ids = malloc(sizeof *ids * (size_t)cap);
    if (!ids) {
        snprintf(msg, msgsz, "out of memory parsing device list");
        return PLD_ERR_NOMEM;
    }
    const char *p = spec, *item = spec;
    if (!*p)
        goto bad;
    for (;;) {
        long lo, hi;
        int got;
        item = p;
        if ((got = parse_num(&p, &lo)) == 0)
            goto bad;
        if (got < 0)
            goto range;
        hi = lo;
        if (*p == '-') {
            p++;
            if ((got = parse_num(&p, &hi)) == 0)
                goto bad;
            if (got < 0)
                goto range;
            if (hi < lo) {
                snprintf(msg, msgsz, "device range '%.*s' in '%s' is descending", (int)(p - item),
                         item, spec);
                goto fail;
            }
        }
        if (hi - lo + 1 > max - n) {
            snprintf(msg, msgsz,
                     "device list '%s' has more than %d devices (PLD_MAX_RANKS raises the limit, "
                     "up to %d)",
                     spec, max, PLD__MAX_RANKS_LIMIT);
            goto fail;
        }
        for (long d = lo; d <= hi; d++) {
            if (n == cap) {
                cap *= 2;
                int *grown = realloc(ids, sizeof *ids * (size_t)cap);
                if (!grown) {
                    snprintf(msg, msgsz, "out of memory parsing device list");
                    free(ids);
                    return PLD_ERR_NOMEM;
                }
                ids = grown;
            }
            ids[n++] = (int)d;
        }
        if (*p == '\0')
            break;
        if (*p != ',')
            goto bad;
        p++;
    }
    long twice = first_duplicate(ids, n);
    if (twice == -2) {
        snprintf(msg, msgsz, "out of memory parsing device list");
        free(ids);
        return PLD_ERR_NOMEM;
    }
    if (twice >= 0) {
        snprintf(msg, msgsz, "device %ld appears twice in '%s'", twice, spec);
        goto fail;
    }
    *ids_out = ids;
    *n_out = n;
    return PLD_OK;
range:
    snprintf(msg, msgsz, "device '%.*s' in '%s' is out of range: ids are 0..%ld", (int)(p - item),
             item, spec, DEVICE_MAX);
    goto fail;
bad:
    snprintf(msg, msgsz,
             "bad device list '%s' at position %d (expected ids like '0,1', '0-3' or '4,5')", spec,
             (int)(p - spec));
fail:
    free(ids);
    return PLD_ERR_ARG;
}
