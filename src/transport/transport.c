/* The list of transports compiled into this library. */
#include <string.h>

#include "transport/transport.h"

static const pld_transport_ops *const transports[] = {
    &pld__tp_thread_ops,
    &pld__tp_process_ops,
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
    return "thread, process";
}
