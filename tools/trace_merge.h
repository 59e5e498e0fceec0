/* SPDX-License-Identifier: Apache-2.0 */
/* pld trace merge: per-rank traces into one (tools/trace_merge.c). */
#ifndef PLD_TOOL_TRACE_MERGE_H
#define PLD_TOOL_TRACE_MERGE_H

/* argv[0] is "trace". Returns the exit status. */
int trace_main(int argc, char **argv);

#endif
