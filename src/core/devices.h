/* SPDX-License-Identifier: Apache-2.0 */
/* Device-id list parsing. */
#ifndef PLD_DEVICES_H
#define PLD_DEVICES_H

#include "core/internal.h"

/* Parses `spec` into a malloc'd array of distinct ids. */
pld_status pld__devices_parse(const char *spec, int **ids_out, int *n_out, char *msg, size_t msgsz);

#endif
