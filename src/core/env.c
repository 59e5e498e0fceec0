/* Every PLD_* environment setting is read here.
 *
 *   PLD_UB_BYTES         on-core buffer per core (profile default 192 KiB)
 *   PLD_URMA_SQ_DEPTH    URMA SQ depth in WQEBBs (a5sim, default 1024)
 *   PLD_WAIT_TIMEOUT_MS  single-wait timeout (default 60000)
 *   PLD_TRACE            Chrome trace output path
 *   PLD_CHECK            comma list: signals, race, noargs (agreement check off)
 *   PLD_DEBUG            WARN | INFO | TRACE
 *   PLD_IR               1: record and print rank 0's lowering listing
 *   PLD_SPIN             spin iterations before a wait yields
 *   PLD_YIELDS           sched_yield rounds before it sleeps (oversubscribed)
 *   PLD_PIN              1: pin rank r to CPU r mod n, 0: never (default: pin
 *                        when ranks outnumber the CPUs this process may use)
 *   PLD_MPI_SHM          0: the mpi transport moves data with MPI RMA even when
 *                        every rank shares this node's memory (default 1)
 *   PLD_SCHED            a seed: run launches under the schedule explorer
 *                        (src/check/explore.c; thread and process transports)
 *   PLD_MUTANT           the planted protocol bug to switch on, in the test
 *                        library pld_mutants only (src/coll/mutant.c) */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

const char *pld__env_str(const char *name)
{
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

long pld__env_long(const char *name, long dflt)
{
    const char *v = pld__env_str(name);
    if (!v)
        return dflt;
    char *end = NULL;
    long x = strtol(v, &end, 0);
    if (end == v)
        return dflt;
    /* K/M/G suffixes make byte sizes readable: PLD_UB_BYTES=256K */
    if (*end == 'K' || *end == 'k')
        x <<= 10;
    else if (*end == 'M' || *end == 'm')
        x <<= 20;
    else if (*end == 'G' || *end == 'g')
        x <<= 30;
    return x;
}

unsigned pld__env_check_bits(void)
{
    const char *v = pld__env_str("PLD_CHECK");
    unsigned bits = 0;
    if (!v)
        return 0;
    char buf[256];
    strncpy(buf, v, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strcmp(tok, "signals"))
            bits |= PLD_CHECK_SIGNALS;
        else if (!strcmp(tok, "race"))
            bits |= PLD_CHECK_RACE;
        else if (!strcmp(tok, "noargs"))
            bits |= PLD_CHECK_NOARGS;
        else if (!strcmp(tok, "all"))
            bits |= PLD_CHECK_SIGNALS | PLD_CHECK_RACE;
    }
    return bits;
}
