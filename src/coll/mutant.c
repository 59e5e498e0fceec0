/* SPDX-License-Identifier: Apache-2.0 */
/* PLD_MUTANT=<name> for the test library (see mutant.h). */
#include <stdlib.h>
#include <string.h>

#include "coll/mutant.h"

int pld__mutant(const char *name)
{
    const char *on = getenv("PLD_MUTANT");
    return on && !strcmp(on, name);
}

int pld__mutant_credit(void)
{
    const char *on = getenv("PLD_MUTANT");
    return on && *on && strncmp(on, "ll_", 3) != 0;
}
