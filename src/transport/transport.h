/* SPDX-License-Identifier: Apache-2.0 */
/* The transport table: the only interface between pld's primitives and the
 * way ranks execute and reach each other's memory.
 *
 * Primitives (src/prim) and collectives (src/coll) are written once against
 * this table. A transport fills every slot with designated initialisers; a
 * slot it cannot serve points at one of the shared fillers declared below
 * (never NULL). docs/dev/transport.md describes every slot at length.
 *
 * Waiting is not a transport's business: the wait policy (src/prim/wait.c)
 * spins, yields, sleeps, watches the deadline, the group's abort and the
 * deadlock detector, once for every transport. A transport only loads a
 * cell (signal_load), sleeps (sleep_prepare / sleep / sleep_end), wakes the
 * sleepers of a rank (inside signal_update and abort) and reports a failure
 * that only it can see (peer_failed).
 *
 * Offsets (`off`) are byte offsets into a rank's slice of a window buffer and
 * have been bounds-checked by the caller. */
#ifndef PLD_TRANSPORT_H
#define PLD_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pld/pld.h"

/* Capability bits (pld_transport_ops.caps). */
enum {
    /* sleep returns early when signal_update or abort targets the sleeping
     * rank: the wait policy may sleep in long slices. Without it sleep is a
     * plain nap and the policy keeps naps short. */
    PLD__TP_CAP_WAKE = 1u << 0,
    /* Every rank's windows (window_peer_ptr) and every agent's state in the
     * world's control block are live in every rank: the deadlock detector
     * (src/check/deadlock.c) can judge the whole group from any rank. */
    PLD__TP_CAP_DEADLOCK = 1u << 1,
};

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
     * peer if it sleeps: the update is ordered before the look at the peer's
     * sleepers (seq_cst on both), which pairs with sleep_prepare. An add
     * whose sum does not fit in int32 is taken back (pld__add_overflows_i32,
     * see pld__shm_signal_update) and returns PLD_ERR_DATA with the cell's
     * value before it in *old_out, for the caller to name; any other error
     * is reported through pld__kraise or the returned status. */
    pld_status (*signal_update)(pld_ctx *c, pld_window_buffer *buf, int peer, size_t off,
                                int32_t value, pld_notify_op op, int32_t *old_out);
    /* The calling rank's own cell at `off`, with acquire ordering: what the
     * notifier wrote before its update is readable once the value is seen.
     * Cheap enough to poll: the wait policy calls it in its spin loop. */
    int32_t (*signal_load)(pld_ctx *c, pld_window_buffer *buf, size_t off);

    /* ---- sleeping (the wait policy's sleep phase) ---------------------- */
    /* Registers the calling agent as a sleeper of its rank and returns the
     * rank's wake ticket as read before the registration. A full barrier:
     * the caller's re-check of the cell that follows cannot be ordered
     * before the registration, so either that re-check sees a notify or the
     * notifier sees the sleeper and bumps the ticket. Every call is paired
     * with one sleep_end; signal_load runs in between, so a transport whose
     * signal_load may end the kernel (pld__kraise) must register nothing
     * that outlives it. Transports without a wake-up use
     * pld__tp_sleep_prepare_none (no ticket, no ordering: a nap ends by
     * itself, so no wake-up can be lost). */
    uint32_t (*sleep_prepare)(pld_ctx *c);
    /* Sleeps until the rank's ticket differs from `ticket` (a wake), or
     * `timeout_ns` passes, or earlier for no reason (callers re-check).
     * Returns 1 when the whole timeout ran out, 0 otherwise. Transports
     * without a wake-up: pld__tp_sleep_nap (a plain nanosleep). */
    int (*sleep)(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns);
    /* Undoes sleep_prepare, whether sleep ran or not. */
    void (*sleep_end)(pld_ctx *c);

    /* ---- ordering and failure ------------------------------------------ */
    void (*fence)(pld_ctx *c);
    /* Makes every rank blocked in a wait (or entering one) return: bumps
     * every rank's ticket and wakes its sleepers, after the caller stored the
     * abort status (pld__group_fail), or tells remote ranks some other way. */
    void (*abort)(pld_world *w);
    /* 1 when this rank learned, by means only the transport has, that a peer
     * failed the current launch (MPI: the abort cell another process set);
     * polled by the wait policy now and then. Transports whose failures all
     * reach the world's abort_status return 0: pld__tp_no_peer_failure. */
    int (*peer_failed)(pld_ctx *c);

    /* PLD__TP_CAP_* bits. */
    unsigned caps;

    /* ---- host agreement ------------------------------------------------ */
    /* 1 if every process of the world passed the same value (collective
     * under mpi; one process elsewhere: always 1). */
    int (*host_agree)(pld_world *w, uint64_t value);
    /* bits[0, n) becomes the bitwise OR of every process's bits (collective
     * under mpi; one process elsewhere: unchanged). 0 on success. */
    int (*host_union)(pld_world *w, unsigned char *bits, size_t n);
} pld_transport_ops;

/* 1 if old + value does not fit in int32 (the AtomicAdd of signal_update). */
static inline int pld__add_overflows_i32(int32_t old, int32_t value)
{
    return value > 0 ? old > INT32_MAX - value : old < INT32_MIN - value;
}

/* Returns the transport named `name`, or NULL. */
const pld_transport_ops *pld__transport_find(const char *name);
/* Comma list of transports compiled in, for messages and `pld info`. */
const char *pld__transport_names(void);
/* The transport used when the program names none: "mpi" when this process
 * was started by an MPI launcher and MPI is compiled in, else "thread". */
const char *pld__transport_default(void);

/* Shared slot fillers for transports that need nothing special. */
int pld__tp_program_sized(void);                   /* launcher_size: 0 */
int pld__tp_threads_always_ok(const pld_world *w); /* threads_ok: 1 */
uint32_t pld__tp_sleep_prepare_none(pld_ctx *c);   /* sleep_prepare: no ticket (0) */
int pld__tp_sleep_nap(pld_ctx *c, uint32_t ticket, uint64_t timeout_ns); /* sleep: nanosleep */
void pld__tp_sleep_end_none(pld_ctx *c);                                 /* sleep_end: nothing */
int pld__tp_no_peer_failure(pld_ctx *c);                                 /* peer_failed: 0 */
int pld__tp_one_host_agrees(pld_world *w, uint64_t value); /* host_agree: 1 (one host) */
int pld__tp_one_host_union(pld_world *w, unsigned char *bits, size_t n); /* host_union: as is */

extern const pld_transport_ops pld__tp_thread_ops;
extern const pld_transport_ops pld__tp_process_ops;
#ifdef PLD_HAVE_MPI
extern const pld_transport_ops pld__tp_mpi_ops;
#endif

/* How long a launch waits, once its group has failed, for ranks still inside
 * the kernel before it gives up on them (the process transport kills them,
 * the thread transport marks the world unusable, the mpi transport aborts
 * the job). A rank released by the abort leaves within microseconds; one
 * that has not left this long after the failure, and this long after the
 * last rank that did leave (thousands of ranks on two CPUs unwind one
 * after the other, for longer than this in all), is in user code that
 * reaches no pld call. Short enough that a launch whose
 * peers timed out still returns within the wait timeout + 1 s, long enough
 * for 64 ranks on 2 loaded cores (or sanitizer builds) to unwind. */
#define PLD__STUCK_GRACE_MS 500

#endif /* PLD_TRANSPORT_H */
