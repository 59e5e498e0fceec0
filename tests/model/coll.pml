/* SPDX-License-Identifier: Apache-2.0 */
/* The builtins' protocols, step by step as in src/coll/*.c, and the user
 * code around each call (staging its inputs, reading its outputs, reusing
 * the windows that peers read during the call).
 *
 * Data abstraction: every window slice (a row, a chunk, a segment, a block)
 * holds one byte, V(k, n): "written for call k, holding n contributions"
 * (n = 1 for plain data, n = number of ranks summed in for reductions).
 * 0 means "nothing valid": the initial contents, and what the user writes
 * into a window it reuses right after a call returns. A writer stores the
 * value of its call; a reader asserts the exact value its call expects.
 * A read and the write that follows it are separate steps, so every
 * interleaving of a peer's write between them is explored: if any rank could
 * overwrite a slice that a peer may still read, or a reader could run ahead
 * of the write it needs, some interleaving makes an assertion fail.
 *
 * Locals of the rank process used here: i, j, q (loop indices, a peer), g (a
 * round or ring step), L, R (ring neighbours). */

#define V(k, n) ((k) * 8 + (n))   /* n < 8: reductions over up to 7 ranks */

/* ---- windows (only the ones the sequence uses take state) ---------------- */
#ifdef USE_BCAST
byte bc[P];                 /* broadcast data [S]: one slice per rank */
#define BC(r) bc[r]
#endif
#ifdef USE_AG
byte ag[P * P];             /* allgather target [P,S]: row s on rank r */
#define AG(r, s) ag[(r) * P + (s)]
#endif
#ifdef USE_A2A
byte a2a[P * P];            /* all_to_all target [P,S] */
#define A2A(r, s) a2a[(r) * P + (s)]
#endif
#ifdef USE_RS
byte rs[P * P];             /* reduce_scatter data [P,S] */
#define RS(r, s) rs[(r) * P + (s)]
#endif
#ifdef USE_MESH
#define NCH 2
byte mesh[P * NCH];         /* allreduce mesh data: NCH chunks */
#define MESH(r, c) mesh[(r) * NCH + (c)]
#endif
#if defined(USE_RSAG) || defined(USE_RAB)
byte ra[P * P];             /* allreduce rs_ag data: P segments, segment s owned by rank s;
                             * the Rabenseifner allreduce's: the first Q */
#define RA(r, s) ra[(r) * P + (s)]
#endif
#ifdef USE_RAB
#if P < 4                   /* Q: the Rabenseifner allreduce's segments */
#define RQ 2
#elif P < 8
#define RQ 4
#else
#define RQ 8
#endif
#endif
#ifdef USE_RING
byte rg[P * P];             /* allreduce ring data: P segments */
#define RG(r, s) rg[(r) * P + (s)]
#endif
#ifdef USE_A2AV
byte av[P * P];             /* all_to_all_v target [P*M,S]: one M-row block per source */
byte rc[P * P];             /* recv_counts window [P,1], written by its owner only */
byte cl[P * 2 * P];         /* count lines: on rank r, parity q, the line of writer s */
#define CL(r, q, s) cl[((r) * 2 + (q)) * P + (s)]
#define AV(r, s) av[(r) * P + (s)]
#define RC(r, s) rc[(r) * P + (s)]
#endif
#ifdef USE_MOE
byte sc[P];                 /* dispatch send_counts window [P,1] (staged as a whole) */
byte tg[P * P];             /* dispatch target [P*C,H]: one C-row block per source */
byte eo[P * P];             /* combine expert_out [P*C,H], same layout as target */
#define SC(r) sc[r]
#define TG(r, s) tg[(r) * P + (s)]
#define EO(r, s) eo[(r) * P + (s)]
#endif
#ifdef USE_MX
byte mr[P];                 /* MoE exchange recv_counts window [P,E] (as a whole) */
byte mt[P * P];             /* its packed target: source s's rows on rank r */
byte me_[P * P];            /* combine expert_out, same layout as the target */
byte mo[P * P];             /* combine out: the rows back from expert rank d */
#define MR(r) mr[r]
#define MT(r, s) mt[(r) * P + (s)]
#define ME(r, s) me_[(r) * P + (s)]
#define MO(r, d) mo[(r) * P + (d)]
#endif

/* ---- the group's flag lines (src/coll/ll.h) --------------------------------
 * Every rank has 2 x P flag cells: cell (q, src) is written by rank src
 * only, with Set, and holds the epoch of src's last call of parity q that
 * wrote it. The one-round path (ll.pml), the binomial broadcast, the
 * doubling allgather, the Rabenseifner allreduce and Bruck's all_to_all use
 * them, and all take their epochs from one count per rank (the locals ep
 * and pq of pld.pml; the last two take two each). pld clears every flag
 * on the host before the next launch; here each rank clears its own at
 * kernel end instead, and the end of init asserts that they are still
 * zero: every Set of the launch landed before its owner finished, so one
 * clear between launches is enough. */
#ifdef USE_FLAGS
byte flag[P * 2 * P];
#define FLAG(r, par, s) flag[((r) * 2 + (par)) * P + (s)]

inline ll_kernel_end()
{
    for (i : 0 .. P - 1) {
        if
        :: i != me ->
            FLAG(me, 0, i) = 0;
            FLAG(me, 1, i) = 0
        :: else -> skip
        fi
    }
}
#endif

/* ---- the ordering guarantee G ----------------------------------------------
 * In the sequences with one-round calls (ll.pml), binomial broadcasts,
 * doubling allgathers, Rabenseifner allreduces or Bruck all_to_alls, every
 * call asserts at its entry that every rank has entered the call before it: the rounds of the
 * two paths must keep that together, the credit builtins that push before
 * their barrier rely on it, and so do the flags' epochs. ent[r] is the last
 * call rank r entered. -DNOG leaves the assertion out, to see what a broken
 * G breaks. */
#if defined(USE_FLAGS) && !defined(NOG)
byte ent[P];
inline g_enter(k)
{
    d_step {
        for (i : 0 .. P - 1) {
            assert(ent[i] + 1 >= k)
        };
        ent[me] = k;
        i = 0
    }
}
#define G_ENTER(k) g_enter(k);
#else
#define G_ENTER(k)
#endif

/* ---- agreement check (src/check/agree.c) -----------------------------------
 * On entry, before its first notify, each builtin publishes the fingerprint
 * of its call into slot (k mod 2) of its own agreement window; after its
 * first full round it reads the left neighbour's slot of this call and
 * compares. A fingerprint is modelled as its call number k: reading any
 * other value means a peer rewrote the slot too early (or never wrote it). */
#ifdef NOARGS
/* the check turned off (PLD_CHECK=noargs) */
#define AGR_CHECK(r, k) skip
inline agree_publish(k)
{
    G_ENTER(k)
    skip
}
#else
byte agr[P * 2];
#define AGR(r, k) agr[(r) * 2 + (k) % 2]
#define AGR_CHECK(r, k) assert(AGR(r, k) == k)
inline agree_publish(k)
{
    G_ENTER(k)
    AGR(me, k) = k
}
#endif

/* barrier(1) of a call, then the agreement comparison */
inline first_round(k)
{
    credit_barrier(1);
    AGR_CHECK((me + P - 1) % P, k)
}

/* ---- barrier (barrier.c) -------------------------------------------------- */
inline do_barrier(k)
{
    agree_publish(k);
    first_round(k);
    credit_epilogue(1)
}

#ifdef USE_BCAST
/* ---- broadcast (broadcast.c): pull between two full credit rounds --------- */
inline bcast(k, root)
{
    agree_publish(k);
#ifdef rooted_bcast
    /* mutant (the form before two full rounds): non-roots hear only from the
     * root. It has no credit barrier, so no agreement comparison either. */
    if
    :: me == root ->
        for (i : 0 .. P - 1) {   /* "staged" to every non-root */
            if
            :: i != me -> CELL(i, me) = CELL(i, me) + 1
            :: else -> skip
            fi
        };
        for (i : 0 .. P - 1) {   /* wait for every "pulled" */
            if
            :: i != me -> (CELL(me, i) >= 1)
            :: else -> skip
            fi
        };
        for (i : 0 .. P - 1) {   /* take back my cells' credits */
            if
            :: i != me -> CELL(me, i) = CELL(me, i) - 1
            :: else -> skip
            fi
        }
    :: else ->
        (CELL(me, root) >= 1);
        assert(BC(root) == V(k, 1));
        BC(me) = V(k, 1);
        CELL(root, me) = CELL(root, me) + 1;     /* "pulled" */
        CELL(me, root) = CELL(me, root) - 1
    fi
#else
    first_round(k);               /* ready: the root staged, everyone is in */
    if
    :: me != root ->
        assert(BC(root) == V(k, 1));             /* pull the root's data ... */
        BC(me) = V(k, 1)                         /* ... into mine */
    :: else -> skip
    fi;
#ifdef bcast_no_readdone
    credit_epilogue(1)            /* mutant: no read-done round */
#else
    credit_barrier(2);            /* read done: the root's data is free */
    credit_epilogue(2)
#endif
#endif
}

inline do_bcast(k, root)
{
    if
    :: me == root -> BC(me) = V(k, 1)           /* the root stages */
    :: else -> skip
    fi;
    bcast(k, root);
    assert(BC(me) == V(k, 1));                   /* the result, read in place */
    if
    :: me == root -> BC(me) = 0                  /* peers read it: reusable now */
    :: else -> skip
    fi
}

#ifdef USE_BCAST_BINOMIAL
/* ---- broadcast down a binomial tree (broadcast_binomial.c) -----------------
 * Ranks relative to the root: v = (me - root) mod P. Rank v > 0 pulls the
 * whole data from its parent v - 2^j (2^j the highest power of two <= v);
 * rank v is the parent of v + 2^b for every power of two 2^b > v with
 * v + 2^b < P. Round 1 (ready), then the call takes an epoch e as a
 * one-round call does (the same count ep, parity pq = e mod 2, whatever
 * ll_one_slot does: the library takes it in pld__ll_count_line); v > 0
 * waits until its flag cell (pq, parent) >= e and pulls; then, farthest
 * child first, it Sets e into its cell (pq, me) of each child (data before
 * flag); round 2 (read done), epilogue 2. The wait also asserts what the
 * library's comment claims: the cell holds exactly e, never a later
 * call's epoch. Planted bugs: binomial_no_wait (src/coll/mutant.h: pull
 * without the wait), and the model's own binomial_flag_first (Set
 * the children's flags before the pull) and binomial_no_readdone (no
 * round 2, epilogue 1). */
#define VREL(r, root) (((r) + P - (root)) % P)   /* rank -> v */
#define VABS(v, root) (((v) + (root)) % P)       /* v -> rank */
#if P <= 2
#define BSPAN 2                   /* the smallest power of two >= P */
#elif P <= 4
#define BSPAN 4
#elif P <= 8
#define BSPAN 8
#else
#define BSPAN 16
#endif

/* v > 0: wait my flag (pq, parent q) of this call, then pull the parent's
 * data; a read step, then a write step */
inline binomial_pull(k, root)
{
    if
    :: VREL(me, root) > 0 ->
#ifndef binomial_no_wait
        atomic {                  /* wait my flag (pq, q) >= e: it is e */
            (FLAG(me, pq, q) >= ep);
            assert(FLAG(me, pq, q) == ep)
        };
#endif
        assert(BC(q) == V(k, 1)); /* pull the parent's data ... */
        BC(me) = V(k, 1)          /* ... into mine */
    :: else -> skip
    fi
}

/* my children v + 2^b, the farthest first: Set e into my cell (pq, me) of
 * each child's flags (one step per child) */
inline binomial_notify(root)
{
    j = BSPAN / 2;
    do
    :: j > VREL(me, root) ->
        atomic {
            if
            :: VREL(me, root) + j < P -> FLAG(VABS(VREL(me, root) + j, root), pq, me) = ep
            :: else -> skip
            fi;
            j = j / 2
        }
    :: else -> break
    od;
    j = 0
}

inline bcast_binomial(k, root)
{
    agree_publish(k);
    first_round(k);               /* round 1, ready: the root staged, everyone is in */
    d_step {                      /* take the epoch; my parent q (v > 0) */
        ep = ep + 1;
        pq = ep % 2;
        q = me;
        if
        :: VREL(me, root) > 0 ->
            j = 1;
            do
            :: j * 2 <= VREL(me, root) -> j = j * 2
            :: else -> break
            od;
            q = VABS(VREL(me, root) - j, root);
            j = 0
        :: else -> skip
        fi
    };
#ifdef binomial_flag_first
    binomial_notify(root);        /* mutant: the flags before the pull */
    binomial_pull(k, root);
#else
    binomial_pull(k, root);       /* data before flag */
    binomial_notify(root);
#endif
    q = 0;
#ifdef binomial_no_readdone
    credit_epilogue(1)            /* mutant: no read-done round */
#else
    credit_barrier(2);            /* round 2, read done: nobody reads any data */
    credit_epilogue(2)
#endif
}

inline do_bcast_binomial(k, root)
{
    if
    :: me == root -> BC(me) = V(k, 1)           /* the root stages */
    :: else -> skip
    fi;
    bcast_binomial(k, root);
    assert(BC(me) == V(k, 1));                   /* the result, read in place */
    BC(me) = 0                                   /* every inner rank's data was
                                                  * a pull source: all reusable now */
}
#endif
#endif

#ifdef USE_AG
/* ---- allgather (allgather.c): push own row, then one barrier -------------- */
inline ag_push(k, with_self)
{
    for (i : 1 .. P) {            /* right neighbour first, self last */
        q = (me + i) % P;
        if
        :: q != me || with_self -> AG(q, me) = V(k, 1)
        :: else -> skip
        fi
    }
}

inline ag_body(k, with_self, late)
{
    agree_publish(k);
    if
    :: late ->                    /* mutant: push after the barrier */
        first_round(k);
        ag_push(k, with_self)
    :: else ->
        ag_push(k, with_self);
        first_round(k)
    fi;
    credit_epilogue(1)
}

#ifdef push_after_barrier
#define AG_LATE 1
#else
#define AG_LATE 0
#endif

inline ag_read(k)
{
    for (i : 0 .. P - 1) {
        assert(AG(me, i) == V(k, 1))
    }
}

inline do_allgather(k)
{
    ag_body(k, 1, AG_LATE);
    ag_read(k)
}

inline do_allgather_inplace(k)
{
    AG(me, me) = V(k, 1);         /* the caller stages its own row in place */
    ag_body(k, 0, 0);
    ag_read(k)
}

#ifdef USE_AG_DOUBLING
/* ---- allgather by recursive doubling (allgather_doubling.c) ----------------
 * Rank r holds rows r .. r+h-1 (mod P) of its target after the step that
 * doubled h. The call: publish; my own row into my target (the self copy);
 * take an epoch e as a one-round call does (the same count ep, parity pq =
 * e mod 2: the library takes it in pld__ll_count_line); then for h = 1, 2,
 * 4, ... below P, with n = min(h, P-h), to = me-h and from = me+h:
 *   put   rows me .. me+n-1 of my target into the same rows of to's target
 *         (per row a read step, which asserts that I hold the row of this
 *         call, then a write step);
 *   flag  Set e into my cell (pq, me) of to's flags (data before flag);
 *   wait  my cell (pq, from) >= e, asserting that it holds exactly e (from
 *         put rows me+h .. me+h+n-1 into mine);
 * then the done round, round 1, and epilogue 1. The done round is the
 * call's only credit round, so it is where the library compares the
 * fingerprints (pld__credit_barrier): first_round. Rows land at their own
 * index and a rank receives every row once per call, from one peer (row
 * ranges me+h .. me+h+n-1 of the steps are disjoint and never wrap to me).
 * Planted bugs: doubling_no_wait (src/coll/mutant.h: the wait of the first
 * step, h = 1, is skipped), doubling_no_done (src/coll/mutant.h: no done
 * round, no epilogue; so no agreement comparison either) and the model's
 * own doubling_flag_first (each step's flag Set before its rows are put).
 * Locals: g = h, q = to, j = the row of the run. */
inline doubling_put(k)
{
    j = 0;
    do
    :: j < g && j < P - g ->
        assert(AG(me, (me + j) % P) == V(k, 1));   /* I hold row me+j ... */
        atomic {
            AG(q, (me + j) % P) = V(k, 1);         /* ... put it into to's */
            j++
        }
    :: else -> break
    od;
    j = 0
}

inline ag_doubling(k)
{
    agree_publish(k);
    AG(me, me) = V(k, 1);         /* my own row, staged where the steps forward it from */
    d_step {                      /* take the epoch; step h = 1, to = me-1 */
        ep = ep + 1;
        pq = ep % 2;
        g = 1;
        q = (me + P - 1) % P
    };
    do
    :: g < P ->
#ifdef doubling_flag_first
        FLAG(q, pq, me) = ep;     /* mutant: the flag before the rows */
        doubling_put(k);
#else
        doubling_put(k);          /* data before flag */
        FLAG(q, pq, me) = ep;
#endif
#ifdef doubling_no_wait
        if
        :: g == 1 ->              /* mutant: the first step's flag not waited for */
            d_step {
                g = g * 2;
                q = (me + P - g) % P
            }
        :: else ->
#endif
        atomic {                  /* wait my flag (pq, from) >= e: it is e */
            (FLAG(me, pq, (me + g) % P) >= ep);
            assert(FLAG(me, pq, (me + g) % P) == ep);
            g = g * 2;
            q = (me + P - g) % P
        }
#ifdef doubling_no_wait
        fi
#endif
    :: else -> break
    od;
    g = 0;
    q = 0;
#ifdef doubling_no_done
    skip                          /* mutant: no done round (so no agreement
                                   * comparison) and no epilogue */
#else
    first_round(k);               /* done: nobody forwards rows of any target
                                   * for this call any more */
    credit_epilogue(1)
#endif
}

inline do_allgather_doubling(k)
{
    ag_doubling(k);
    ag_read(k)
}
#endif
#endif

#ifdef USE_A2A
/* ---- all_to_all (all_to_all.c): push each chunk, then one barrier --------- */
inline a2a_push(k)
{
    for (i : 1 .. P) {
        q = (me + i) % P;
        A2A(q, me) = V(k, 1)
    }
}

inline do_a2a(k)
{
    agree_publish(k);
#ifdef push_after_barrier
    first_round(k);
    a2a_push(k);
#else
    a2a_push(k);
    first_round(k);
#endif
    credit_epilogue(1);
    for (i : 0 .. P - 1) {        /* the caller reads the rows */
        assert(A2A(me, i) == V(k, 1))
    }
}

#ifdef USE_BRUCK
/* ---- all_to_all by Bruck's algorithm (all_to_all_bruck.c) ------------------
 * Rank r keeps its chunks in a private work array indexed from itself:
 * entry i starts as the chunk r made for rank r+i. Step g (h = 2^g, g = 0
 * .. BSTEPS-1, BSTEPS = ceil(log2 P)) moves every entry whose index has
 * bit g set from rank r to rank r+h, into the same index: before step g,
 * entry i of rank r holds the chunk origin o = r - (i mod h) made for rank
 * o + i. A step's chunks travel packed, in index order, into a landing
 * area of the receiver's target window: its last BN(g) rows when g is
 * even, its first BN(g) rows when g is odd (BN(g) = how many indices
 * below P have bit g set, at most P/2: the two areas never overlap).
 * The call takes two epochs (pld__ll_count_line twice): e1 = ep-1, in the
 * flag cells of parity (ep-1) mod 2 (ready flags), and e2 = ep, in the
 * others (data flags). A rank:
 *   ready   Sets e1 into its cell of rank r-2^g's flags, for g = 0 and 1 at
 *           entry, and for g+2 after unpacking step g: its landing area of
 *           step g is free;
 *   then for each step g, to = r+h and from = r-h:
 *   wait    its cell (e1's parity, to) >= e1: to's landing area is free;
 *   put     the packed entries into to's landing rows (one write step over
 *           the whole area), then Sets e2 into its cell of to's flags (data
 *           before flag);
 *   wait    its cell (e2's parity, from) >= e2;
 *   get     its landing rows back (one read step asserting every chunk:
 *           a stale row, or one a peer overwrote, fails it; at g = 0 the
 *           same step compares the left neighbour's fingerprint, which the
 *           library does right after the wait);
 *   final   puts every chunk, in row order, into its own target (row s is
 *           the chunk rank s made for it);
 * then the done round, round 1 on the signal in the group's form, and
 * epilogue 1: every rank has written its final rows, so nothing of this
 * call lands in any target any more (a push into the same target may come
 * next: only G orders it, and G says every rank entered this call, not
 * that it finished). The round makes no agreement comparison: step 0's
 * wait made it (pld__call_round finds nothing pending by then). Every
 * wait also asserts that the cell holds exactly the epoch waited for.
 * The work array is not modelled: it is the rank's own memory, and every
 * chunk that enters it is asserted on its way in, so what it holds is
 * what the assertions said.
 * A chunk is BCH(k, o, d): call k, made by rank o for rank d. Its values
 * lie above those of V (< 128), so the target window of the all_to_all can
 * be shared with the push and one-round forms and nothing of one call reads
 * as another's (k * P * P <= 128: up to 5 calls at P = 5, 8 at P = 4).
 * Planted bugs (src/coll/mutant.h): bruck_no_ready (step 0 puts without
 * waiting for the partner's ready), bruck_flag_first (each step's data
 * flag Set before its put) and bruck_no_done (no done round, no
 * epilogue).
 * Locals: g = the step, q = the partner, i = an index, j = a landing row. */
#if P <= 2
#define BSTEPS 1
#elif P <= 4
#define BSTEPS 2
#elif P <= 8
#define BSTEPS 3
#else
#define BSTEPS 4
#endif
#define BCH(k, o, d) (128 + (((k) - 1) * P + (o)) * P + (d))
#define BH(g) (1 << (g))
#define BN(g) ((P / (2 * BH(g))) * BH(g) + \
               (P % (2 * BH(g)) > BH(g) -> P % (2 * BH(g)) - BH(g) : 0))
#define BLAND(g) ((g) % 2 == 1 -> 0 : P - BN(g))
/* before step g, entry i of rank r: its origin, and the rank it is for */
#define BORIG(r, i, g) (((r) + P - ((i) % BH(g))) % P)
#define BDEST(r, i, g) ((BORIG(r, i, g) + (i)) % P)

/* Set e1 into my cell of rank me - 2^s's flags: my landing area of step s
 * is free */
inline bruck_ready(s)
{
    FLAG((me + P - BH(s) % P) % P, (ep - 1) % 2, me) = ep - 1
}

/* step g: put my entries with bit g set into the landing rows of q = me+h */
inline bruck_put(k)
{
    d_step {
        j = BLAND(g);
        for (i : 1 .. P - 1) {
            if
            :: (i >> g) & 1 ->
                A2A(q, j) = BCH(k, BORIG(me, i, g), BDEST(me, i, g));
                j++
            :: else -> skip
            fi
        };
        i = 0;
        j = 0
    }
}

/* step g: get my landing rows, put there by me-h: entry i holds what
 * entry i of me-h held before step g */
inline bruck_get(k)
{
    d_step {
        if
        :: g == 0 -> AGR_CHECK(q, k) /* the left neighbour has published */
        :: else -> skip
        fi;
        j = BLAND(g);
        for (i : 1 .. P - 1) {
            if
            :: (i >> g) & 1 ->
                assert(A2A(me, j) == BCH(k, BORIG((me + P - BH(g) % P) % P, i, g),
                                         BDEST((me + P - BH(g) % P) % P, i, g)));
                j++
            :: else -> skip
            fi
        };
        i = 0;
        j = 0
    }
}

inline bruck(k)
{
    agree_publish(k);
    d_step {                      /* take two epochs, e1 = ep-1 and e2 = ep */
        ep = ep + 2;
        g = 0
    };
    bruck_ready(0);               /* both landing areas are free */
    if
    :: BSTEPS > 1 -> bruck_ready(1)
    :: else -> skip
    fi;
    do
    :: g < BSTEPS ->
        q = (me + BH(g)) % P;
#ifdef bruck_no_ready
        if
        :: g == 0 -> skip         /* mutant: step 0 puts without the ready */
        :: else ->
#endif
        atomic {                  /* wait my cell (e1's parity, to) >= e1: it is e1 */
            (FLAG(me, (ep - 1) % 2, q) >= ep - 1);
            assert(FLAG(me, (ep - 1) % 2, q) == ep - 1)
        }
#ifdef bruck_no_ready
        fi
#endif
        ;
#ifdef bruck_flag_first
        FLAG(q, ep % 2, me) = ep; /* mutant: the flag before the put */
        bruck_put(k);
#else
        bruck_put(k);             /* data before flag */
        FLAG(q, ep % 2, me) = ep;
#endif
        q = (me + P - BH(g) % P) % P;
        atomic {                  /* wait my cell (e2's parity, from) >= e2: it is e2 */
            (FLAG(me, ep % 2, q) >= ep);
            assert(FLAG(me, ep % 2, q) == ep)
        };
        bruck_get(k);             /* at step 0 after the agreement comparison */
        if
        :: g + 2 < BSTEPS -> bruck_ready(g + 2) /* this landing area is free again */
        :: else -> skip
        fi;
        g++
    :: else -> break
    od;
    g = 0;
    d_step {                      /* final: row s is the chunk rank s made for me */
        for (i : 0 .. P - 1) {
            A2A(me, i) = BCH(k, i, me)
        };
        i = 0;
        q = 0
    };
#ifdef bruck_no_done
    skip                          /* mutant: no done round, no epilogue */
#else
    credit_barrier(1);            /* done: every rank has written its final
                                   * rows (no comparison: step 0 made it) */
    credit_epilogue(1)
#endif
}

/* the caller reads the rows */
inline bruck_read(k)
{
    d_step {
        for (i : 0 .. P - 1) {
            assert(A2A(me, i) == BCH(k, i, me))
        };
        i = 0
    }
}

inline do_bruck(k)
{
    bruck(k);
    bruck_read(k)
}
#endif
#endif

#ifdef USE_RS
/* ---- reduce_scatter (reduce_scatter.c): pull row `me` from every peer ----- */
inline do_rs(k)
{
    atomic {                      /* the caller stages all P rows */
        for (i : 0 .. P - 1) {
            RS(me, i) = V(k, 1)
        }
    };
    agree_publish(k);
    first_round(k);               /* everyone staged */
    for (i : 1 .. P - 1) {        /* my row me (only I write it) op each peer's */
        q = (me + i) % P;
        assert(RS(q, me) == V(k, 1) && RS(me, me) == V(k, 1))
    };
    RS(me, me) = V(k, P);         /* store: no peer reads my row me */
    credit_barrier(2);            /* every peer finished reading my rows */
    credit_epilogue(2);
    assert(RS(me, me) == V(k, P));
    atomic {                      /* peers read it: reusable now */
        for (i : 0 .. P - 1) {
            RS(me, i) = 0
        }
    }
}
#endif

#ifdef USE_MESH
/* ---- allreduce mesh (allreduce_mesh.c), NCH chunks ------------------------ */
inline do_mesh(k)
{
    atomic {
        for (j : 0 .. NCH - 1) {
            MESH(me, j) = V(k, 1)
        }
    };
    agree_publish(k);
    g = 1;
    first_round(k);               /* ready */
    for (j : 0 .. NCH - 1) {
        for (i : 1 .. P - 1) {    /* my chunk j op every peer's chunk j */
            q = (me + i) % P;
            assert(MESH(q, j) == V(k, 1) && MESH(me, j) == V(k, 1))
        };
#ifndef mesh_no_readdone
        g = g + 1;
        credit_barrier(g);        /* read done: nobody reads chunk j any more */
#endif
        MESH(me, j) = V(k, P)     /* store */
    };
    credit_epilogue(g);
    g = 0;
    for (j : 0 .. NCH - 1) {
        assert(MESH(me, j) == V(k, P))
    };
    atomic {
        for (j : 0 .. NCH - 1) {
            MESH(me, j) = 0
        }
    }
}
#endif

#ifdef USE_RSAG
/* ---- allreduce rs_ag (allreduce_rs_ag.c): reduce-scatter then allgather,
 * both as a mesh, on the [P,1] credit signal. Segment s of every rank's data
 * is owned by rank s: its owner reduces it, everyone else copies it. Small
 * data has fewer segments than ranks (pld_tune_rs_ag_owners): with
 * -DRSAG_OWNERS=M only ranks 0..M-1 own one, the others only copy, and the
 * call synchronises through the owners instead of three full rounds (the
 * owner rounds, below). ------------------------------------------------- */
#ifndef RSAG_OWNERS
#define RSAG_OWNERS P
#endif
#define RSAG_OWNER(r) ((r) < RSAG_OWNERS)

/* my segment me op every peer's segment me, then the store: peers read only
 * their own segments of my window in this phase */
inline rsag_reduce(k)
{
    if
    :: RSAG_OWNER(me) ->
        for (i : 1 .. P - 1) {
            q = (me + i) % P;
            assert(RA(q, me) == V(k, 1) && RA(me, me) == V(k, 1))
        };
        RA(me, me) = V(k, P)
    :: else -> skip               /* not an owner: nothing to reduce */
    fi
}

/* segment q from its owner q, starting at a different owner on each rank */
inline rsag_pull(k)
{
    for (i : 0 .. RSAG_OWNERS - 1) {
        q = (me + i) % RSAG_OWNERS;
        if
        :: q != me ->
            assert(RA(q, q) == V(k, P));
            RA(me, q) = V(k, P)   /* q read it in its reduce-scatter, before
                                   * the round that let me pull */
        :: else -> skip
        fi
    }
}

#if RSAG_OWNERS < P && !defined(RSAG_FULL_ROUNDS)
/* Owner rounds (1 <= M < P, M <= PLD_RS_AG_OWNER_ROUNDS_MAX): before the
 * finals only the owners read peers' data, and after them only the owners'
 * segments are read, so every credit goes to or comes from an owner: a
 * non-owner waits only for the owners' finals, and nobody waits for a
 * non-owner's read done. A credit from src to dst is +1 in cell src of dst, as in the
 * full form's rounds, whatever the group's form: the tree and
 * dissemination rounds of the calls around this one count in some of the
 * same cells, which is why the sequences run in every form. The waits are
 * Ge in every mutant, as in the C (eq_wait changes the credit barrier
 * only). What a cell of dst gets from src in one call: ready and read done
 * if dst is an owner, final if src is one; so an owner's cell of an owner
 * 3, of a non-owner 2, a non-owner's cell of an owner 1, of a non-owner
 * nothing -- what the epilogue takes back, each after the wait that saw it
 * (with no_epilogue it stays). */
inline rsag_tell_owners()
{
    for (i : 0 .. RSAG_OWNERS - 1) {
        if
        :: i != me -> CELL(i, me) = CELL(i, me) + 1
        :: else -> skip
        fi
    }
}

/* an owner hears every rank: an owner's cell >= go, a non-owner's >= gn */
inline rsag_owner_hears_all(go, gn)
{
    for (i : 0 .. P - 1) {
        if
        :: i != me -> (CELL(me, i) >= (RSAG_OWNER(i) -> go : gn))
        :: else -> skip
        fi
    }
}

inline rsag_rounds(k)
{
    rsag_tell_owners();           /* ready: I staged */
    if
    :: RSAG_OWNER(me) ->
        rsag_owner_hears_all(1, 1);
        rsag_reduce(k);
        for (i : 0 .. P - 1) {    /* final: my segment is reduced */
            if
            :: i != me -> CELL(i, me) = CELL(i, me) + 1
            :: else -> skip
            fi
        }
    :: else -> skip
    fi;
#ifndef rsag_no_round2
    for (i : 0 .. RSAG_OWNERS - 1) { /* every owner's final: my pulls read
                                   * reduced segments, and their owners
                                   * are done reading mine (a peer owner's
                                   * ready came before its final) */
        if
        :: i != me -> (CELL(me, i) >= (RSAG_OWNER(me) -> 2 : 1))
        :: else -> skip
        fi
    };
#endif
    /* the first point where every rank has entered (each owner heard
     * every ready before its final; at M = 1 the owner, after its own
     * final), so the library compares the fingerprints here */
    AGR_CHECK((me + P - 1) % P, k);
    rsag_pull(k);
    rsag_tell_owners();           /* read done */
#ifndef rsag_no_readdone
    if
    :: RSAG_OWNER(me) -> rsag_owner_hears_all(3, 2) /* nobody reads my
                                   * segment any more */
    :: else -> skip               /* nobody reads a non-owner after the finals */
    fi;
#endif
#ifndef no_epilogue
    for (i : 0 .. P - 1) {        /* what each cell got, taken back */
        if
        :: i != me && RSAG_OWNER(i) ->
            CELL(me, i) = CELL(me, i) - (RSAG_OWNER(me) -> 3 : 1)
        :: i != me && !RSAG_OWNER(i) && RSAG_OWNER(me) ->
            CELL(me, i) = CELL(me, i) - 2
        :: else -> skip
        fi
    }
#endif
}

#else
/* Three full credit rounds: M = P, or (-DRSAG_FULL_ROUNDS) more owners than
 * PLD_RS_AG_OWNER_ROUNDS_MAX, where the C keeps them for M < P too: a
 * non-owner then takes part in every round with nothing to reduce. */
inline rsag_rounds(k)
{
    g = 1;
    first_round(k);               /* round 1, ready: everyone staged */
    rsag_reduce(k);
#ifndef rsag_no_round2
    g = g + 1;
    credit_barrier(g);            /* round 2: every segment is final */
#endif
    rsag_pull(k);
#ifndef rsag_no_readdone
    g = g + 1;
    credit_barrier(g);            /* round 3, read done: nobody reads my
                                   * segment me any more */
#endif
    credit_epilogue(g);
    g = 0
}
#endif

inline do_rsag(k)
{
    atomic {                      /* the caller stages every segment */
        for (i : 0 .. RSAG_OWNERS - 1) {
            RA(me, i) = V(k, 1)
        }
    };
    agree_publish(k);
    rsag_rounds(k);
    for (i : 0 .. RSAG_OWNERS - 1) { /* the caller reads the result */
        assert(RA(me, i) == V(k, P))
    };
    atomic {                      /* peers read it: reusable now */
        for (i : 0 .. RSAG_OWNERS - 1) {
            RA(me, i) = 0
        }
    }
}
#endif

#ifdef USE_RAB
/* ---- allreduce by recursive halving and doubling (allreduce_rabenseifner.c)
 * Q = RQ is the largest power of two <= P and X = RX = P - Q. The even ranks
 * below 2X are extra ranks; the others are virtual ranks v = RVIRT(me) =
 * 0 .. Q-1 (rank RREAL(v) = 2v+1 for v < X, v+X beyond). The data is cut
 * into Q segments, RA(r, s) for s < Q (the rs_ag window, whose first Q
 * segments they are: an rs_ag with Q owners cuts the data the same way).
 * A segment holds V(k, n), n the number of ranks reduced into it: the
 * virtual ranks w whose contributions a segment of v holds are those with
 * w = v mod m, m = Q before the first halving step and halved by each, and
 * w < X stands for two ranks, so n = RCNT(v, m) = Q/m + #{w < X, w = v mod
 * m} (1 or 2 before the first step, P after the last). The call takes two
 * epochs as two one-round calls would (pld__ll_count_line twice): e1 = ep-1,
 * in the flag cells of parity (ep-1) mod 2, and e2 = ep, in the others.
 *   extra    (me even, < 2X) Set e1 into my cell of me+1's flags; wait my
 *            cell (e2's parity, me+1) >= e2; copy every segment of me+1
 *   fold     (me odd, < 2X) wait my cell (e1's parity, me-1) >= e1; reduce
 *            every segment of me-1 into mine: V(k, 1) + V(k, 1) = V(k, 2)
 *   halving  g = Q/2, Q/4, .. 1, partner q = RREAL(v xor g): Set e1 into my
 *            cell of q's flags; wait my cell (e1's parity, q) >= e1; reduce
 *            q's copy of my block [RBLK(v, g), +g) into mine (it holds
 *            RCNT(v xor g, 2g), mine RCNT(v, 2g), the sum RCNT(v, g))
 *   doubling g = 1, 2, .. Q/2, same partners: Set e2 into my cell of q's
 *            flags; wait my cell (e2's parity, q) >= e2; copy q's block
 *            [RBLK(v xor g, g), +g), which is final (V(k, P)), into mine
 *   unfold   (me odd, < 2X) Set e2 into my cell of me-1's flags
 * then the done round, round 1 (the call's only credit round, so it is where
 * the library compares the fingerprints: first_round), and epilogue 1.
 * Every wait also asserts that the cell holds exactly the epoch waited for.
 * A reduce is a read step (asserting the partner's block and mine) then a
 * write step, a copy a read step then a write step, each over the whole
 * block: every rank writes only its own data, a whole block per step, so a
 * read can only meet another call's writes (the caller's rewrite, the next
 * call's), and spin puts each of them before the read step or after it.
 * Planted bugs (src/coll/mutant.h): rab_no_wait (the first halving step
 * reads without its wait), rab_gather_no_wait (the first doubling step
 * copies without its wait), rab_no_fold_wait (the fold reads without the
 * extra rank's flag), rab_no_done (no done round, no epilogue; so no
 * agreement comparison either).
 * Locals: g = the step's half, q = the partner, j = a segment. */
#define RX (P - RQ)
#define RVIRT(r) ((r) < 2 * RX -> (r) / 2 : (r) - RX)
#define RREAL(v) ((v) < RX -> 2 * (v) + 1 : (v) + RX)
#define RCNT(v, m) (RQ / (m) + (RX + (m) - 1 - (v) % (m)) / (m))
#define RBLK(v, g) ((v) / (g) * (g))

/* wait my cell (par, q) >= e: it is e */
inline rab_wait(par, e)
{
    atomic {
        (FLAG(me, par, q) >= e);
        assert(FLAG(me, par, q) == e)
    }
}

inline rab_halving(k)
{
    do                            /* g = Q/2 and q its partner on entry */
    :: g >= 1 ->
        FLAG(q, (ep - 1) % 2, me) = ep - 1;    /* my block is ready */
#ifdef rab_no_wait
        if
        :: g == RQ / 2 -> skip    /* mutant: the first step reads without waiting */
        :: else -> rab_wait((ep - 1) % 2, ep - 1)
        fi;
#else
        rab_wait((ep - 1) % 2, ep - 1);
#endif
        d_step {                  /* read q's copy of my block, and mine */
            for (j : RBLK(RVIRT(me), g) .. RBLK(RVIRT(me), g) + g - 1) {
                assert(RA(q, j) == V(k, RCNT(RVIRT(me) ^ g, 2 * g)) &&
                       RA(me, j) == V(k, RCNT(RVIRT(me), 2 * g)))
            };
            j = 0
        };
        d_step {                  /* store the sum into mine; the next step */
            for (j : RBLK(RVIRT(me), g) .. RBLK(RVIRT(me), g) + g - 1) {
                RA(me, j) = V(k, RCNT(RVIRT(me), g))
            };
            j = 0;
            g = g / 2;
            if
            :: g >= 1 -> q = RREAL(RVIRT(me) ^ g)
            :: else -> q = RREAL(RVIRT(me) ^ 1)
            fi
        }
    :: else -> break
    od
}

inline rab_doubling(k)
{
    g = 1;
    do
    :: g < RQ ->
        FLAG(q, ep % 2, me) = ep; /* my block of g segments is final */
#ifdef rab_gather_no_wait
        if
        :: g == 1 -> skip         /* mutant: the first step copies without waiting */
        :: else -> rab_wait(ep % 2, ep)
        fi;
#else
        rab_wait(ep % 2, ep);
#endif
        d_step {                  /* read q's block */
            for (j : RBLK(RVIRT(me) ^ g, g) .. RBLK(RVIRT(me) ^ g, g) + g - 1) {
                assert(RA(q, j) == V(k, P))
            };
            j = 0
        };
        d_step {                  /* copy it into mine; the next step */
            for (j : RBLK(RVIRT(me) ^ g, g) .. RBLK(RVIRT(me) ^ g, g) + g - 1) {
                RA(me, j) = V(k, P)
            };
            j = 0;
            g = g * 2;
            if
            :: g < RQ -> q = RREAL(RVIRT(me) ^ g)
            :: else -> q = 0
            fi
        }
    :: else -> break
    od;
    g = 0
}

inline rab(k)
{
    agree_publish(k);
    d_step {                      /* take two epochs, e1 = ep-1 and e2 = ep;
                                   * the first partner */
        ep = ep + 2;
        g = RQ / 2;
        if
        :: me < 2 * RX && me % 2 == 0 -> q = me + 1
        :: me < 2 * RX && me % 2 == 1 -> q = me - 1
        :: else -> q = RREAL(RVIRT(me) ^ g)
        fi
    };
    if
    :: me < 2 * RX && me % 2 == 0 -> /* extra: fold into me+1, take its result */
        FLAG(q, (ep - 1) % 2, me) = ep - 1;
        rab_wait(ep % 2, ep);
        d_step {                  /* read me+1's result */
            for (j : 0 .. RQ - 1) {
                assert(RA(q, j) == V(k, P))
            };
            j = 0
        };
        d_step {                  /* copy it into mine */
            for (j : 0 .. RQ - 1) {
                RA(me, j) = V(k, P)
            };
            j = 0;
            g = 0;
            q = 0
        }
    :: else ->
        if
        :: me < 2 * RX ->         /* fold the extra rank me-1 in */
#ifndef rab_no_fold_wait
            rab_wait((ep - 1) % 2, ep - 1);
#endif
            d_step {              /* read me-1's data, and mine */
                for (j : 0 .. RQ - 1) {
                    assert(RA(q, j) == V(k, 1) && RA(me, j) == V(k, 1))
                };
                j = 0
            };
            d_step {              /* store the sum into mine; the first
                                   * halving partner */
                for (j : 0 .. RQ - 1) {
                    RA(me, j) = V(k, 2)
                };
                j = 0;
                q = RREAL(RVIRT(me) ^ g)
            }
        :: else -> skip
        fi;
        rab_halving(k);
        rab_doubling(k);
        if
        :: me < 2 * RX ->         /* unfold: the result is final, me-1 may copy it */
            FLAG(me - 1, ep % 2, me) = ep
        :: else -> skip
        fi
    fi;
#ifdef rab_no_done
    skip                          /* mutant: no done round (so no agreement
                                   * comparison) and no epilogue */
#else
    first_round(k);               /* done: nobody reads any rank's data for
                                   * this call any more */
    credit_epilogue(1)
#endif
}

/* the caller stages every segment */
inline rab_stage(k)
{
    d_step {
        for (i : 0 .. RQ - 1) {
            RA(me, i) = V(k, 1)
        };
        i = 0
    }
}

/* the caller reads the result */
inline rab_read(k)
{
    d_step {
        for (i : 0 .. RQ - 1) {
            assert(RA(me, i) == V(k, P))
        };
        i = 0
    }
}

inline do_rab(k)
{
    rab_stage(k);
    rab(k);
    rab_read(k);
    d_step {                      /* peers read it: reusable now */
        for (i : 0 .. RQ - 1) {
            RA(me, i) = 0
        };
        i = 0
    }
}
#endif

#ifdef USE_RING
/* ---- allreduce ring (allreduce_ring.c), signal [2(P-1), P] ----------------
 * Cell [row, q] of rank r's ring view is RCELL(r, row, q). */
#define RCELL(r, row, q) CELL(r, (row) * P + (q))

inline ring_progress(row)
{
    RCELL(R, row, me) = RCELL(R, row, me) + 1;
    if
    :: L != R -> RCELL(L, row, me) = RCELL(L, row, me) + 1
    :: else -> skip
    fi
}

inline do_ring(k)
{
    atomic {
        for (i : 0 .. P - 1) {
            RG(me, i) = V(k, 1)
        }
    };
    agree_publish(k);
    ring_progress(0);             /* entry: my data is staged */
    for (g : 0 .. 2 * (P - 1) - 1) {
        (RCELL(me, g, L) >= 1);   /* L finished step g-1 */
        if
        :: g == 0 -> AGR_CHECK(L, k)
        :: else -> skip
        fi;
        if
        :: g < P - 1 ->           /* reduce-scatter step g: seg me-1-g */
            q = (me + 2 * P - 1 - g) % P;
            assert(RG(L, q) == V(k, g + 1) && RG(me, q) == V(k, 1));
            RG(me, q) = V(k, g + 2)
        :: else ->                /* allgather step t = g-(P-1): seg me-t */
#ifndef ring_skip_right_wait
            (RCELL(me, g - (P - 1) + 1, R) >= 1);  /* R no longer reads seg me-t */
#endif
            q = (me + P - (g - (P - 1))) % P;
            assert(RG(L, q) == V(k, P));
            RG(me, q) = V(k, P)
        fi;
        if
#ifdef ring_drop_progress
        :: g == 0 ->              /* mutant: R never hears of step 0 */
            RCELL(L, 1, me) = RCELL(L, 1, me) + 1
#endif
        :: else ->
            if
            :: g + 1 < 2 * (P - 1) -> ring_progress(g + 1)
            :: else -> skip
            fi
        fi
    };
    RCELL(L, 0, me) = RCELL(L, 0, me) + 1;   /* done: L may change its data */
#ifndef ring_no_done
    (RCELL(me, 0, R) >= 2);                  /* R is done with mine */
#endif
    for (g : 0 .. 2 * (P - 1) - 1) {         /* epilogue: exactly what arrived */
        if
        :: g == 0 && L == R -> RCELL(me, g, L) = RCELL(me, g, L) - 2
        :: else -> RCELL(me, g, L) = RCELL(me, g, L) - 1
        fi;
        if
        :: L != R && g == 0 -> RCELL(me, g, R) = RCELL(me, g, R) - 2
        :: L != R && g != 0 -> RCELL(me, g, R) = RCELL(me, g, R) - 1
        :: else -> skip
        fi
    };
    g = 0;
    for (i : 0 .. P - 1) {
        assert(RG(me, i) == V(k, P))
    };
    atomic {                      /* R read it: reusable now */
        for (i : 0 .. P - 1) {
            RG(me, i) = 0
        }
    }
}
#endif

#ifdef USE_A2AV
/* ---- all_to_all_v (all_to_all_v.c): push blocks, Set counts, barrier ------ */
inline do_a2av(k)
{
    agree_publish(k);
#ifdef a2av_count_first
    for (i : 1 .. P) {
        q = (me + i) % P;
        if
        :: q != me -> CL(q, k % 2, me) = V(k, 1)
        :: else -> skip
        fi
    };
    first_round(k);
    for (i : 1 .. P) {
        q = (me + i) % P;
        AV(q, me) = V(k, 1)
    };
#else
    for (i : 1 .. P) {
        q = (me + i) % P;
        AV(q, me) = V(k, 1);      /* the M-row block */
        if                        /* notify(my line of q's count lines, Set) */
        :: q != me -> CL(q, k % 2, me) = V(k, 1)
        :: else -> skip
        fi
    };
    first_round(k);
#endif
    for (i : 0 .. P - 1) {        /* my recv_counts from my count lines */
        if
        :: i != me -> assert(CL(me, k % 2, i) == V(k, 1)); RC(me, i) = V(k, 1)
        :: else -> RC(me, i) = V(k, 1)
        fi
    };
    credit_epilogue(1);
    for (i : 0 .. P - 1) {        /* the caller reads recv_counts, then rows */
        assert(RC(me, i) == V(k, 1));
        assert(AV(me, i) == V(k, 1))
    }
}
#endif

#ifdef USE_MOE
/* ---- indexed dispatch and combine (indexed_all_to_all_v.c,
 * indexed_combine.c), one core: lane 0 of the signal ------------------------ */
inline do_dispatch(k)
{
    SC(me) = V(k, 1);             /* the caller stages send_counts */
    agree_publish(k);
    first_round(k);               /* ready: staged, previous target consumed */
    for (i : 0 .. P - 1) {        /* recv_counts[s] = send_counts_s[me] */
        assert(SC(i) == V(k, 1))
    };
    for (i : 0 .. P - 1) {        /* remote sends */
        if
        :: i != me -> TG(i, me) = V(k, 1)
        :: else -> skip
        fi
    };
    TG(me, me) = V(k, 1);         /* self rows */
    credit_barrier(2);            /* complete: every row landed */
    credit_epilogue(2);
    for (i : 0 .. P - 1) {
        assert(TG(me, i) == V(k, 1))
    };
    SC(me) = 0                    /* peers read it: reusable now */
}

/* The local expert step between dispatch kd and combine kc: reads what
 * dispatch delivered, writes expert_out block by block. */
inline do_expert(kd, kc)
{
    for (i : 0 .. P - 1) {
        assert(TG(me, i) == V(kd, 1));
        EO(me, i) = V(kc, 1)
    }
}

inline do_combine(k)
{
    agree_publish(k);
#ifdef combine_early
    for (i : 0 .. P - 1) {        /* mutant: pull without the ready round */
        assert(EO(i, me) == V(k, 1))
    };
    first_round(k);
    credit_epilogue(1);
#else
    first_round(k);               /* every expert's rows are final */
    for (i : 0 .. P - 1) {        /* pull my rows from every expert_out */
        assert(EO(i, me) == V(k, 1))
    };
    credit_barrier(2);            /* nobody reads expert_out any more */
    credit_epilogue(2);
#endif
    atomic {                      /* the experts may reuse it */
        for (i : 0 .. P - 1) {
            EO(me, i) = 0
        }
    }
}
#endif

#ifdef USE_MX
/* ---- the MoE exchange (moe_dispatch.c, moe_combine.c) ----------------------
 * recv_counts holds V(k, 1) while it carries this rank's staged send counts
 * and V(k, 2) once it holds what the rank received. */
inline do_mx_dispatch(k)
{
    agree_publish(k);
    MR(me) = V(k, 1);             /* counts round: my send_counts, staged */
    first_round(k);
    for (i : 0 .. P - 1) {        /* pull every peer's count matrix */
        if
        :: i != me -> assert(MR(i) == V(k, 1))
        :: else -> skip
        fi
    };
    for (i : 0 .. P - 1) {        /* data round: rows to their packed places */
        if
        :: i != me -> MT(i, me) = V(k, 1)
        :: else -> skip
        fi
    };
    MT(me, me) = V(k, 1);
#ifdef moe_recv_early
    MR(me) = V(k, 2);             /* mutant: received counts before the barrier */
    credit_barrier(2);
#else
    credit_barrier(2);            /* every row landed, nobody reads my counts */
    MR(me) = V(k, 2);
#endif
    credit_epilogue(2);
    for (i : 0 .. P - 1) {        /* the caller reads the target at once */
        assert(MT(me, i) == V(k, 1))
    };
    assert(MR(me) == V(k, 2))
}

/* The experts between dispatch kd and combine kc. */
inline do_mx_expert(kd, kc)
{
    for (i : 0 .. P - 1) {
        assert(MT(me, i) == V(kd, 1));
        ME(me, i) = V(kc, 1)
    }
}

/* Combine kc of the rows dispatch kd sent. */
inline do_mx_combine(kd, kc)
{
    agree_publish(kc);
    first_round(kc);              /* every expert_out final, recv_counts intact */
    for (i : 0 .. P - 1) {        /* per expert rank: its recv_counts, my rows */
        assert(MR(i) == V(kd, 2));
        assert(ME(i, me) == V(kc, 1));
        MO(me, i) = V(kc, 1)
    };
#ifdef moe_combine_no_done
    credit_epilogue(1);           /* mutant: no read-done round */
#else
    credit_barrier(2);            /* nobody reads expert_out any more */
    credit_epilogue(2);
#endif
    atomic {                      /* the caller reads out; the experts reuse theirs */
        for (i : 0 .. P - 1) {
            assert(MO(me, i) == V(kc, 1));
            ME(me, i) = 0
        }
    }
}
#endif
