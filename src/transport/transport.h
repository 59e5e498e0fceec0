/* The transport table: the only interface between pld's primitives and the
 * way ranks execute and reach each other's memory.
 *
 * Primitives (src/prim) and collectives (src/coll) are written once against
 * this table. A transport fills every slot with designated initialisers; a
 * slot it cannot serve points at pld__tp_unsupported_* (never NULL).
 *
 * Offsets (`off`) are byte offsets into a rank's slice of a window buffer and
 * have been bounds-checked by the caller. */
#ifndef PLD_TRANSPORT_H
#define PLD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pld/pld.h"

struct pld__wait_desc; /* what a wait is waiting for; src/core/internal.h */

typedef struct pld_transport_ops {
    size_t size; /* sizeof(struct pld_transport_ops): lets the table grow */
    const char *name;

    /* ---- set-up -------------------------------------------------------- */
    /* Ranks the launcher started (mpirun's world size), or 0 when the
     * program's device list decides. May initialise the launcher's library. */
    int (*launcher_size)(void);
    /* Creates the execution resources for w->nranks ranks and the world's
     * shared control block (w->sh, sized by pld__world_shared_bytes). */
    pld_status (*world_init)(pld_world *w);
    void (*world_fini)(pld_world *w);
    /* Runs pld__rank_main(w, rank) on every rank this process hosts and
     * returns when all of them have returned. */
    pld_status (*launch)(pld_world *w);
    /* Which ranks this process hosts: [first, first+count). */
    void (*hosted_ranks)(const pld_world *w, int *first, int *count);
    /* The OS process that runs `rank`. */
    int (*rank_pid)(const pld_world *w, int rank);
    /* 1 if a rank may run several threads that call this transport (the
     * cores of a multi-core call). */
    int (*threads_ok)(const pld_world *w);

    /* ---- windows ------------------------------------------------------- */
    /* Allocates buf->stride * nranks zeroed bytes and sets buf->base. */
    pld_status (*window_alloc)(pld_world *w, pld_window_buffer *buf);
    void (*window_free)(pld_world *w, pld_window_buffer *buf);
    /* Direct load/store address of `peer`'s slice, or NULL when the peer's
     * memory is not mapped here (then put/get must be used). */
    void *(*window_peer_ptr)(pld_world *w, pld_window_buffer *buf, int peer);
    void *(*host_alloc)(pld_world *w, size_t bytes);
    void (*host_free)(pld_world *w, void *p);
    /* 1 if [p, p+bytes) is memory every rank of this world can address. */
    int (*host_visible)(pld_world *w, const void *p, size_t bytes);
    /* 1 if the calling rank may use [p, p+bytes) as a plain tensor: shared
     * memory, or memory of its own; 0 for the host's private memory. */
    int (*rank_mem_ok)(pld_ctx *c, const void *p, size_t bytes);

    /* ---- data ---------------------------------------------------------- */
    pld_status (*put)(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off, const void *src,
                      size_t bytes);
    pld_status (*get)(pld_ctx *c, void *dst, pld_window_buffer *buf, int peer, size_t off,
                      size_t bytes);
    /* Elementwise atomic dst += src at the peer for an additive dtype. */
    pld_status (*accumulate)(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                             const void *src, size_t count, pld_dtype dtype);

    /* ---- signals ------------------------------------------------------- */
    /* Set or add `value` to the INT32 cell at `off` of peer's slice, with
     * release ordering (data issued before it is visible first), and wake the
     * peer if it sleeps. */
    pld_status (*signal_update)(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                int32_t value, pld_notify_op op);
    int32_t (*signal_load)(pld_ctx *c, pld_window_buffer *buf, size_t off);
    /* Blocks until this rank's cell satisfies the comparison (acquire), the
     * group aborts (PLD_ERR_PEER / root cause), the wait times out
     * (PLD_ERR_TIMEOUT) or a deadlock is detected (PLD_ERR_DEADLOCK). */
    pld_status (*signal_wait)(pld_ctx *c, const struct pld__wait_desc *wd);

    /* ---- ordering and failure ------------------------------------------ */
    void (*fence)(pld_ctx *c);
    /* Makes every rank blocked in a wait (or entering one) return. */
    void (*abort)(pld_world *w);
} pld_transport_ops;

/* Returns the transport named `name`, or NULL. */
const pld_transport_ops *pld__transport_find(const char *name);
/* Comma list of transports compiled in, for messages and `pld info`. */
const char *pld__transport_names(void);
/* The transport used when the program names none: "mpi" when this process
 * was started by an MPI launcher and MPI is compiled in, else "thread". */
const char *pld__transport_default(void);

/* Shared slot fillers for transports that need nothing special. */
int pld__tp_program_sized(void);                 /* launcher_size: 0 */
int pld__tp_threads_always_ok(const pld_world *w); /* threads_ok: 1 */

extern const pld_transport_ops pld__tp_thread_ops;
extern const pld_transport_ops pld__tp_process_ops;
#ifdef PLD_HAVE_MPI
extern const pld_transport_ops pld__tp_mpi_ops;
#endif

#endif /* PLD_TRANSPORT_H */
