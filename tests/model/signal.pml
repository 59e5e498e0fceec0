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

/* The three synchronisation forms of src/coll/credit.c (PLD_SYNC): full
 * (the default here), -DSYNC_DISSEM (dissemination) and -DSYNC_TREE (the
 * gather-release tree, FAN children per rank; FAN = 2 gives a tree of
 * depth 2 at P = 4 and 3 at P = 8). Each is credit_barrier(g) and
 * credit_epilogue(n) with the same contract: after barrier(g) every rank
 * has reached barrier(g) of this call, and the epilogue leaves every cell
 * this call raised as it found it. Two planted bugs of the forms, which
 * check.sh requires the model to reject: dissem_one_round (the first
 * round only: a rank hears from its left neighbour alone) and
 * tree_no_gather (a parent releases its children without waiting for
 * their arrivals). */
#if defined(SYNC_DISSEM)

/* round d = 1, 2, 4, ...: arrive at me + d, wait for me - d */
inline credit_barrier(g)
{
    i = 1;
    do
    :: i < P ->
        CELL((me + i) % P, me) = CELL((me + i) % P, me) + 1;
        CREDIT_WAIT(CELL(me, (me + P - i) % P), g);
#ifdef dissem_one_round
        i = P /* mutant: round 1 only, a chain from the left neighbour alone */
#else
        i = i * 2
#endif
    :: else -> break
    od
}

inline credit_epilogue(n)
{
#ifdef no_epilogue
    skip
#else
    i = 1;
    do
    :: i < P ->
        CELL(me, (me + P - i) % P) = CELL(me, (me + P - i) % P) - (n);
#ifdef dissem_one_round
        i = P
#else
        i = i * 2
#endif
    :: else -> break
    od
#endif
}

#elif defined(SYNC_TREE)

#ifndef FAN
#define FAN 2
#endif
#define FIRSTC (me * FAN + 1)
#define NCH ((FIRSTC >= P) -> 0 : ((FIRSTC + FAN <= P) -> FAN : P - FIRSTC))
#define PARENT ((me - 1) / FAN)

/* wait for my subtree's arrivals (my own cell), arrive at my parent (its
 * own cell), wait for its release (my cell of it), release my children */
inline credit_barrier(g)
{
#ifndef tree_no_gather
    if
    :: NCH > 0 -> CREDIT_WAIT(CELL(me, me), (g) * NCH)
    :: else -> skip
    fi;
#endif
    if
    :: me > 0 ->
        CELL(PARENT, PARENT) = CELL(PARENT, PARENT) + 1;
        CREDIT_WAIT(CELL(me, PARENT), g)
    :: else -> skip
    fi;
    i = 0;
    do
    :: i < NCH -> CELL(FIRSTC + i, me) = CELL(FIRSTC + i, me) + 1; i++
    :: else -> break
    od
}

inline credit_epilogue(n)
{
#ifdef no_epilogue
    skip
#else
    if
    :: NCH > 0 ->
#ifdef tree_no_gather
        /* mutant: the parent does not wait for its children's arrivals
         * (it takes them back once they came) */
        CREDIT_WAIT(CELL(me, me), (n) * NCH);
#endif
        CELL(me, me) = CELL(me, me) - (n) * NCH
    :: else -> skip
    fi;
    if
    :: me > 0 -> CELL(me, PARENT) = CELL(me, PARENT) - (n)
    :: else -> skip
    fi
#endif
}

#else

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

#endif
