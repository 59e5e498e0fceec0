/* SPDX-License-Identifier: Apache-2.0 */
/** @file
 * pld — what libpld.so exports.
 *
 * The library is compiled with -fvisibility=hidden: only the declarations
 * its public headers mark PLD_API are in the shared library's dynamic
 * symbol table. The internal pld__* functions stay out of it, so no program
 * can come to depend on them, and calls between the library's own files
 * bind directly instead of through the PLT. Included by <pld/types.h>. */
#ifndef PLD_EXPORT_H
#define PLD_EXPORT_H

/** @def PLD_API
 * Marks a declaration that libpld.so exports (default visibility). */

#if defined(__GNUC__)
#define PLD_API __attribute__((visibility("default")))
#else
#define PLD_API
#endif

#endif /* PLD_EXPORT_H */
