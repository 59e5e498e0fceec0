/* SPDX-License-Identifier: Apache-2.0 */
/* A world's cost-model parameters: read from the parameter file once per
 * process and path, measured and written when the file does not exist
 * (the first world on a machine), shared by every rank of the world -- and
 * under mpi taken from rank 0, so that every process chooses alike. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/internal.h"
#include "tune/tune.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int have;
static pld_tune cached;
static char cached_path[4096];

/* The parameters at pld_tune_path(): cached, read, or measured and
 * written. */
static pld_status obtain(pld_tune *t)
{
    pld_status st = PLD_OK;
    char path[4096];
    snprintf(path, sizeof path, "%s", pld_tune_path());
    pthread_mutex_lock(&lock);
    if (have && !strcmp(path, cached_path)) {
        *t = cached;
    } else if (*path && access(path, F_OK) == 0 &&
               (st = pld_tune_load(path, t)) != PLD_ERR_UNSUPPORTED) {
        /* read, or a file pld did not write: an error */
    } else {
        /* none, or one an older or newer pld wrote: measure (again) */
        st = PLD_OK;
#ifdef PLD_MUTANTS
        /* the planted bugs would run in the measuring worlds too */
        pld__tune_defaults(t);
#else
        if (pld_tune_measure(t, 0) != PLD_OK) {
            PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, -1,
                      "cost model: measuring failed (%s); built-in parameters", pld_last_error());
            pld__tune_defaults(t);
        } else if (*path && pld_tune_save(path, t) != PLD_OK) {
            PLD__LOGS(PLD__LOG_WARN, PLD__SUB_INIT, -1, "cost model: %s", pld_last_error());
        } else if (*path) {
            /* what the file says, to the last digit: a process that reads
             * it later must choose as this one does */
            st = pld_tune_load(path, t);
        }
#endif
    }
    if (st == PLD_OK) {
        cached = *t;
        have = 1;
        snprintf(cached_path, sizeof cached_path, "%s", path);
    }
    pthread_mutex_unlock(&lock);
    return st;
}

pld_status pld__tune_prepare(void)
{
    if (pld__settings_are_defaults())
        return PLD_OK;
    pld_tune t;
    char why[1024];
    pld_status st = obtain(&t);
    if (st == PLD_OK)
        return PLD_OK;
    snprintf(why, sizeof why, "%s", pld_last_error());
    return pld__init_fail(st, "pld_world_init: cost model: %s", why);
}

pld_status pld__tune_world_init(pld_world *w)
{
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    pld_tune t = {0};
    pld_status st = PLD_OK;
    char why[1024] = "";
    if (pld__settings_are_defaults()) {
        /* a world that measures the parameters (tune_measure.c) */
        pld__tune_defaults(&w->sh->tune);
        return PLD_OK;
    }
    if (first == 0) {
        st = obtain(&t);
        if (st != PLD_OK) {
            snprintf(why, sizeof why, "%s", pld_last_error());
            memset(&t, 0, sizeof t);
        }
    }
    /* rank 0's parameters for every process: the others contribute zeros */
    if (w->tp->host_union(w, (unsigned char *)&t, sizeof t) != 0)
        return pld__world_fail(w, PLD_ERR_SYSTEM,
                               "cost model: rank 0's parameters did not reach this process");
    if (st != PLD_OK)
        return pld__world_fail(w, st, "cost model: %s", why);
    if (t.cpus < 1)
        return pld__world_fail(w, PLD_ERR_ARG,
                               "cost model: rank 0 could not read its parameter file");
    w->sh->tune = t;
    return PLD_OK;
}

pld_status pld_world_tune(const pld_world *w, pld_tune *out)
{
    if (!w || !out)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_tune: %s is NULL", w ? "out" : "w");
    *out = w->sh->tune;
    return PLD_OK;
}
