/* The list of transports compiled into this library. */
#include <stdlib.h>
#include <string.h>

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
