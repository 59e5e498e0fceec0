/* SPDX-License-Identifier: Apache-2.0 */
/* Status names, data type table and version: the X-macro lists. */
#include "core/internal.h"

#define PLD__STATUS_LIST(X)                                                                        \
    X(PLD_OK)                                                                                      \
    X(PLD_ERR_ARG)                                                                                 \
    X(PLD_ERR_BOUNDS)                                                                              \
    X(PLD_ERR_ALIAS)                                                                               \
    X(PLD_ERR_UNSUPPORTED)                                                                         \
    X(PLD_ERR_NOMEM)                                                                               \
    X(PLD_ERR_DEADLOCK)                                                                            \
    X(PLD_ERR_TIMEOUT)                                                                             \
    X(PLD_ERR_PEER)                                                                                \
    X(PLD_ERR_DATA)                                                                                \
    X(PLD_ERR_RACE)                                                                                \
    X(PLD_ERR_CHECK)                                                                               \
    X(PLD_ERR_SYSTEM)

const char *pld_status_name(pld_status s)
{
    switch (s) {
#define PLD__STATUS_CASE(name)                                                                     \
    case name:                                                                                     \
        return #name;
        PLD__STATUS_LIST(PLD__STATUS_CASE)
#undef PLD__STATUS_CASE
    }
    return "PLD_ERR_UNKNOWN";
}

/* dtype, name, size */
#define PLD__DTYPE_LIST(X)                                                                         \
    X(PLD_FP32, "fp32", 4)                                                                         \
    X(PLD_FP16, "fp16", 2)                                                                         \
    X(PLD_BF16, "bf16", 2)                                                                         \
    X(PLD_INT32, "int32", 4)                                                                       \
    X(PLD_INT16, "int16", 2)                                                                       \
    X(PLD_INT8, "int8", 1)                                                                         \
    X(PLD_UINT8, "uint8", 1)                                                                       \
    X(PLD_INT64, "int64", 8)                                                                       \
    X(PLD_FP64, "fp64", 8)

size_t pld_dtype_size(pld_dtype t)
{
    switch (t) {
#define PLD__DTYPE_SIZE(e, n, s)                                                                   \
    case e:                                                                                        \
        return s;
        PLD__DTYPE_LIST(PLD__DTYPE_SIZE)
#undef PLD__DTYPE_SIZE
    }
    return 0;
}

const char *pld_dtype_name(pld_dtype t)
{
    switch (t) {
#define PLD__DTYPE_NAME(e, n, s)                                                                   \
    case e:                                                                                        \
        return n;
        PLD__DTYPE_LIST(PLD__DTYPE_NAME)
#undef PLD__DTYPE_NAME
    }
    return "invalid";
}

const char *pld_version(void)
{
    return PLD_VERSION_STRING;
}
