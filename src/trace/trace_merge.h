/* SPDX-License-Identifier: Apache-2.0 */
/* Trace post-processing shared by the library and the pld tool: the flow
 * arrows from a notify to the blocked wait it released, and the merge of
 * per-rank trace files into one (src/trace/trace_merge.c).
 *
 * Self-contained (standard headers only): tools/trace_merge.c includes it. */
#ifndef PLD_TRACE_MERGE_H
#define PLD_TRACE_MERGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Writes to out one flow pair (",\n{...ph:s...},\n{...ph:f...}") per blocked
 * wait among the events in text[0, len) that a notify in the same text
 * released, with ids from *next_id on. Events are the ones the trace
 * writes: a notify carries "flow":[0,win,rank,cell,value after], a blocked
 * wait "flow":[1,win,rank,cell,value seen]. Returns the number of pairs,
 * -1 when out of memory. */
long pld__trace_flows(const char *text, size_t len, uint64_t *next_id, FILE *out);

/* Merges the traces ins[0..n) into one file `out`: every event and track
 * name once, the inputs' flow arrows dropped and drawn again across all of
 * them. 0 on success; -1 with a message naming the file in err. */
int pld__trace_merge(const char *out, const char *const *ins, int n, char *err, size_t errsz);

#endif
