/* SPDX-License-Identifier: Apache-2.0 */
/* The version, three ways: the generated header's macros, the library's
 * pld_version() at run time and what CMake's project(VERSION) says (argv[1],
 * passed by the test). All must agree, or a package would be labelled with
 * one version and run another. */
#include <pld/pld.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: version_check PROJECT_VERSION\n");
        return 2;
    }
    char parts[64];
    snprintf(parts, sizeof parts, "%d.%d.%d", PLD_VERSION_MAJOR, PLD_VERSION_MINOR,
             PLD_VERSION_PATCH);
    const char *got[] = {PLD_VERSION_STRING, parts, pld_version()};
    const char *what[] = {"PLD_VERSION_STRING", "PLD_VERSION_MAJOR.MINOR.PATCH", "pld_version()"};
    int bad = 0;
    for (int i = 0; i < 3; i++) {
        if (strcmp(got[i], argv[1])) {
            printf("%s is %s, project(VERSION) is %s\n", what[i], got[i], argv[1]);
            bad = 1;
        }
    }
    if (!bad)
        puts("OK");
    return bad;
}
