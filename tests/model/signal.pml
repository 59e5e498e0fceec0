/* SPDX-License-Identifier: Apache-2.0 */
/* Signals and the self-clearing credit barrier (src/coll/credit.c).
 *
 * sig[] holds every rank's signal window: NCELL int cells per rank. Rank q's
 * arrival at rank r is cell q of r's window (CELL(r, q)). When the sequence
 * contains the ring allreduce, the window is the ring's [2(P-1), P] signal
 * and the credit barrier's [P,1] view is its row 0: cell q of the [P,1] view
 * and cell [0, q] of the ring view are the same int, exactly as in a program
 * that passes two views of one signal buffer.
 *
 * Every notify (AtomicAdd, Set) is one indivisible read-modify-write of one
 * cell; every wait is a blocking expression that becomes executable once the
 * cell satisfies the comparison (Ge, or Eq in the eq_wait mutant). */

#ifdef HAS_RING
#define NCELL (2 * (P - 1) * P)
#else
#define NCELL P
#endif

short sig[P * NCELL];

#define CELL(r, c) sig[(r) * NCELL + (c)]

#ifdef eq_wait
#define CREDIT_WAIT(x, g) ((x) == (g))
#else
#define CREDIT_WAIT(x, g) ((x) >= (g))
#endif

/* barrier(g): AtomicAdd +1 into cell[me] of every peer, then wait until
 * every cell[src] of my own window reaches g. */
inline credit_barrier(g)
{
    for (i : 0 .. P - 1) {
        if
        :: i != me -> CELL(i, me) = CELL(i, me) + 1
        :: else -> skip
        fi
    };
    for (i : 0 .. P - 1) {
        if
        :: i != me -> CREDIT_WAIT(CELL(me, i), g)
        :: else -> skip
        fi
    }
}

/* epilogue(n): take this call's n credits back out of every cell[src] of my
 * own window (AtomicAdd -n). A faster peer may already have added credits
 * of its next call: they stay. */
inline credit_epilogue(n)
{
#ifdef no_epilogue
    skip
#else
    for (i : 0 .. P - 1) {
        if
        :: i != me -> CELL(me, i) = CELL(me, i) - (n)
        :: else -> skip
        fi
    }
#endif
}
