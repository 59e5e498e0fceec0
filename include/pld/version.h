/* pld — version macros. */
#ifndef PLD_VERSION_H
#define PLD_VERSION_H

#define PLD_VERSION_MAJOR 0
#define PLD_VERSION_MINOR 1
#define PLD_VERSION_PATCH 0
#define PLD_VERSION_STRING "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the library actually linked, "MAJOR.MINOR.PATCH". */
const char *pld_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PLD_VERSION_H */
