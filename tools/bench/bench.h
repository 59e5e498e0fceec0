/* SPDX-License-Identifier: Apache-2.0 */
/* The subcommands of the pld tool that live under tools/bench/. Each takes
 * argv with argv[0] = the subcommand name and returns the exit status:
 * 0 success, 1 failure (launch error, wrong result, card mismatch),
 * 2 usage error. */
#ifndef PLD_TOOLS_BENCH_H
#define PLD_TOOLS_BENCH_H

int bench_main(int argc, char **argv);     /* pld bench */
int cost_main(int argc, char **argv);      /* pld cost */
int moe_main(int argc, char **argv);       /* pld moe (tools/moe) */
int moe_bench_main(int argc, char **argv); /* pld bench moe (tools/moe) */

#endif
