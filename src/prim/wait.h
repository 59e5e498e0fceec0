/* SPDX-License-Identifier: Apache-2.0 */
/* The wait policy: how a rank waits for one of its own signal cells, once
 * for every transport (src/prim/wait.c). */
#ifndef PLD_WAIT_H
#define PLD_WAIT_H

#include "core/internal.h"

/* Blocks until this rank's cell wd->off of wd->buf satisfies the comparison
 * (PLD_OK, with acquire ordering: what the notifier wrote before its update
 * is readable), the group aborts or a peer fails (PLD_ERR_PEER; the root
 * cause is the group's), a deadlock is found (PLD_ERR_PEER after recording
 * PLD_ERR_DEADLOCK as the root cause) or the wait outlives the world's wait
 * timeout (PLD_ERR_TIMEOUT; the caller writes the message). Only the
 * calling agent's state and wait record are written. */
pld_status pld__wait_policy(pld_ctx *c, const pld__wait_desc *wd);

/* Publishes what the agent waits for, for the deadlock report. */
void pld__wait_publish(const pld_ctx *c, const pld__wait_desc *wd);

#endif
