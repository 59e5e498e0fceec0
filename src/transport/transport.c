/* SPDX-License-Identifier: Apache-2.0 */
/* The list of transports compiled into this library, and the shared slot
 * fillers. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport/transport.h"

static const pld_transport_ops *const transports[] = {
    &pld__tp_thread_ops,
    &pld__tp_process_ops,
#ifdef PLD_HAVE_MPI
    &pld__tp_mpi_ops,
#endif
};

const pld_transport_ops *pld__transport_find(const char *name)
{
    for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++)
        if (!strcmp(transports[i]->name, name))
            return transports[i];
    return NULL;
}

const char *pld__transport_names(void)
{
#ifdef PLD_HAVE_MPI
    return "thread, process, mpi";
#else
    return "thread, process";
#endif
}

const char *pld__transport_default(void)
{
#ifdef PLD_HAVE_MPI
    /* what Open MPI's, MPICH's and PMIx launchers put in every process */
    static const char *const launched[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"};
    for (size_t i = 0; i < sizeof launched / sizeof launched[0]; i++)
        if (getenv(launched[i]))
            return "mpi";
#endif
    return "thread";
}

int pld__tp_program_sized(void)
{
    return 0;
}

int pld__tp_threads_always_ok(const pld_world *w)
{
    (void)w;
    return 1;
}

uint32_t pld__tp_sleep_prepare_none(pld_ctx *c)
{
    (void)c;
    return 0;
}

int pld__tp_sleep_nap(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns)
{
    (void)c, (void)ticket;
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000u),
                          .tv_nsec = (long)(timeout_ns % 1000000000u)};
    nanosleep(&ts, NULL);
    return 1;
}

void pld__tp_sleep_end_none(pld_ctx *c)
{
    (void)c;
}

int pld__tp_no_peer_failure(pld_ctx *c)
{
    (void)c;
    return 0;
}

int pld__tp_one_host_agrees(pld_world *w, uint64_t value)
{
    (void)w, (void)value;
    return 1;
}

int pld__tp_one_host_union(pld_world *w, unsigned char *bits, size_t n)
{
    (void)w, (void)bits, (void)n;
    return 0;
}
