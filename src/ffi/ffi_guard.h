/* SPDX-License-Identifier: Apache-2.0 */
/* The guard of every pld_ffi_* call (pld/ffi.h): the kernel's error exit
 * points into the call for its duration, so an error returns a status to
 * the foreign caller instead of unwinding through its interpreter. */
#ifndef PLD_FFI_GUARD_H
#define PLD_FFI_GUARD_H

#include <string.h>

#include "core/internal.h"
#include "pld/ffi.h"

/* The status an interrupted call returns: what this rank raised, else the
 * group's failure reached it (PLD_ERR_PEER). */
pld_status pld__ffi_status(pld_ctx *c);

/* Runs `call` (a statement using c) guarded and returns from the enclosing
 * function: PLD_OK, or the status of the error it raised. c is a parameter
 * the call does not change; nothing else lives across the setjmp. */
#define PLD__FFI_RUN(c, call)                                                                      \
    do {                                                                                           \
        if (!(c))                                                                                  \
            return PLD_ERR_ARG;                                                                    \
        jmp_buf outer_;                                                                            \
        memcpy(&outer_, &(c)->agent->jb, sizeof outer_);                                           \
        if (setjmp((c)->agent->jb) != 0) {                                                         \
            memcpy(&(c)->agent->jb, &outer_, sizeof outer_);                                       \
            return pld__ffi_status(c);                                                             \
        }                                                                                          \
        call;                                                                                      \
        memcpy(&(c)->agent->jb, &outer_, sizeof outer_);                                           \
        return PLD_OK;                                                                             \
    } while (0)

#endif
