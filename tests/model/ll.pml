/* SPDX-License-Identifier: Apache-2.0 */
/* The one-round path of the builtins (src/coll/ll.c): a small call in one
 * eager round through pld's own inboxes, never touching the user's signal.
 *
 * Every rank has two internal windows of the group:
 *   box   2 x P slots: slot (q, src) is what rank src sent this rank in a
 *         one-round call of parity q (one version byte, as for the data);
 *   flag  2 x P cells: cell (q, src) is written by rank src only, with Set.
 * Each rank counts its one-round calls (ep = 1, 2, 3, ...; credit-path calls
 * are not counted) and uses parity pq = ep mod 2. A call:
 *   publish the fingerprint (agreement check);
 *   for every peer: put my payload into its slot (pq, me) if I have one,
 *                   then Set its flag (pq, me) = ep   -- data before flag;
 *   for every src:  wait my flag (pq, src) >= ep      -- left neighbour first;
 *   compare the left neighbour's fingerprint;
 *   copy out / reduce from my own slots (pq, src) into the call's output.
 * Every rank sends to every peer, a flag without payload when it has
 * nothing for that peer (broadcast non-roots; barrier). At kernel end each
 * rank sets its own flags back to 0 (pld.pml). The flags, their clearing
 * and the epoch count are shared with the binomial broadcast, so they are
 * declared in coll.pml (FLAG, ll_kernel_end).
 *
 * The outputs are the same user windows as the credit builtins' (coll.pml),
 * written only by their owner here; the inputs are staged by the caller as
 * there. A copy-out is a read step (the assertion on the slot) then a write
 * step, so a peer's put can land between the two.
 *
 * Mutants, as src/coll/mutant.h plants them: ll_one_slot (one slot per
 * pair: pq always 0), ll_no_wait (broadcast waits only for the peers that
 * have a payload for me: the root for nobody, a non-root for the root; with
 * no full round there is no agreement comparison), ll_flag_before_data (Set
 * the flag, then put the payload).
 *
 * Locals of the rank process used here: i (loop), q (a peer), ep (epoch),
 * pq (parity). */

byte box[P * 2 * P];
#define BOX(r, par, s) box[((r) * 2 + (par)) * P + (s)]

/* the next one-round call: its epoch and parity */
inline ll_enter()
{
    ep = ep + 1;
#ifdef ll_one_slot
    pq = 0                        /* mutant: one slot per pair */
#else
    pq = ep % 2
#endif
}

/* to every peer q (right neighbour first): my payload `val` if `has`, then
 * the flag */
inline ll_send(has, val)
{
    for (i : 1 .. P - 1) {
        q = (me + i) % P;
#ifdef ll_flag_before_data
        FLAG(q, pq, me) = ep;     /* mutant: flag first */
        if
        :: has -> BOX(q, pq, me) = val
        :: else -> skip
        fi
#else
        if
        :: has -> BOX(q, pq, me) = val
        :: else -> skip
        fi;
        FLAG(q, pq, me) = ep      /* Set: the payload is visible before it */
#endif
    }
}

/* wait for every peer's flag (left neighbour first), then the agreement
 * comparison: every peer has published its fingerprint */
inline ll_wait(k)
{
    for (i : 1 .. P - 1) {
        q = (me + P - i) % P;
        (FLAG(me, pq, q) >= ep)
    };
    AGR_CHECK((me + P - 1) % P, k)
}

/* ---- barrier: flags only --------------------------------------------------- */
inline do_ll_barrier(k)
{
    agree_publish(k);
    ll_enter();
    ll_send(0, 0);
    ll_wait(k)
}

#ifdef USE_BCAST
/* ---- broadcast(root): the root's data to every non-root -------------------- */
inline do_ll_bcast(k, root)
{
    if
    :: me == root -> BC(me) = V(k, 1)           /* the root stages */
    :: else -> skip
    fi;
    agree_publish(k);
    ll_enter();
    ll_send(me == root, BC(me));                /* non-roots: empty flags */
#ifdef ll_no_wait
    /* mutant: hear from the root only (the root waits for nobody), so no
     * agreement comparison either */
    if
    :: me != root -> (FLAG(me, pq, root) >= ep)
    :: else -> skip
    fi;
#else
    ll_wait(k);
#endif
    if
    :: me != root ->                            /* copy out slot (pq, root) */
        assert(BOX(me, pq, root) == V(k, 1));
        BC(me) = BOX(me, pq, root)
    :: else -> skip
    fi;
    assert(BC(me) == V(k, 1));                   /* the caller reads the result */
    if
    :: me == root -> BC(me) = 0                  /* and may rewrite its data */
    :: else -> skip
    fi
}
#endif

#ifdef USE_AG
/* ---- allgather: my row (a plain tensor) to every peer ---------------------- */
inline do_ll_allgather(k)
{
    agree_publish(k);
    ll_enter();
    ll_send(1, V(k, 1));
    AG(me, me) = V(k, 1);         /* my own row, copied locally */
    ll_wait(k);
    for (i : 1 .. P - 1) {        /* row src from slot (pq, src) */
        q = (me + P - i) % P;
        assert(BOX(me, pq, q) == V(k, 1));
        AG(me, q) = BOX(me, pq, q)
    };
    ag_read(k)
}

/* allgather_inplace: the caller stages its own row in the target, which is
 * what it sends */
inline do_ll_allgather_inplace(k)
{
    AG(me, me) = V(k, 1);
    agree_publish(k);
    ll_enter();
    ll_send(1, AG(me, me));
    ll_wait(k);
    for (i : 1 .. P - 1) {
        q = (me + P - i) % P;
        assert(BOX(me, pq, q) == V(k, 1));
        AG(me, q) = BOX(me, pq, q)
    };
    ag_read(k)
}
#endif

#ifdef USE_A2A
/* ---- all_to_all: my input row p to peer p ----------------------------------- */
inline do_ll_a2a(k)
{
    agree_publish(k);
    ll_enter();
    ll_send(1, V(k, 1));
    A2A(me, me) = V(k, 1);        /* my own row, copied locally */
    ll_wait(k);
    for (i : 1 .. P - 1) {        /* target row src from slot (pq, src) */
        q = (me + P - i) % P;
        assert(BOX(me, pq, q) == V(k, 1));
        A2A(me, q) = BOX(me, pq, q)
    };
    for (i : 0 .. P - 1) {        /* the caller reads the rows */
        assert(A2A(me, i) == V(k, 1))
    }
}
#endif

#ifdef USE_RS
/* ---- reduce_scatter: my row p to peer p; row me = op over all, rank order -- */
inline do_ll_rs(k)
{
    atomic {                      /* the caller stages all P rows */
        for (i : 0 .. P - 1) {
            RS(me, i) = V(k, 1)
        }
    };
    agree_publish(k);
    ll_enter();
    ll_send(1, RS(me, q));
    ll_wait(k);
    for (i : 0 .. P - 1) {        /* into an accumulator, rank 0 first */
        if
        :: i == me -> assert(RS(me, me) == V(k, 1))
        :: else -> assert(BOX(me, pq, i) == V(k, 1))
        fi
    };
    RS(me, me) = V(k, P);         /* store */
    assert(RS(me, me) == V(k, P));
    atomic {                      /* nobody reads them: reusable now */
        for (i : 0 .. P - 1) {
            RS(me, i) = 0
        }
    }
}
#endif

#ifdef USE_LLAR
/* ---- allreduce: my whole data to every peer; all of it reduced, rank order -- */
byte ar[P];                       /* the allreduce data: one slice per rank */
#define AR(r) ar[r]

inline do_ll_allreduce(k)
{
    AR(me) = V(k, 1);             /* the caller stages */
    agree_publish(k);
    ll_enter();
    ll_send(1, AR(me));
    ll_wait(k);
    for (i : 0 .. P - 1) {        /* into an accumulator, rank 0 first */
        if
        :: i == me -> assert(AR(me) == V(k, 1))
        :: else -> assert(BOX(me, pq, i) == V(k, 1))
        fi
    };
    AR(me) = V(k, P);             /* store */
    assert(AR(me) == V(k, P));
    AR(me) = 0                    /* nobody reads it: reusable now */
}
#endif
