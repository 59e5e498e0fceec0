/* SPDX-License-Identifier: Apache-2.0 */
/* pld explore: many seeds of the schedule explorer (tools/explore.c). */
#ifndef PLD_TOOL_EXPLORE_H
#define PLD_TOOL_EXPLORE_H

/* argv[0] is "explore". Returns the exit status. */
int explore_main(int argc, char **argv);

#endif
