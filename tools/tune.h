/* SPDX-License-Identifier: Apache-2.0 */
/* `pld tune`: measure the cost model's parameters and write them. */
#ifndef PLD_TOOLS_TUNE_H
#define PLD_TOOLS_TUNE_H

int tune_main(int argc, char **argv);

#endif
