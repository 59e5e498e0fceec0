/* SPDX-License-Identifier: Apache-2.0 */
/* pld_world_init_from_args: the common command-line options of every pld
 * program (-p/--platform, -d/--device, --transport, --ir, --ir-svg). */
#include <string.h>

#include "core/internal.h"

/* Matches `name` either as "name value" (consuming two arguments) or as
 * "name=value" (one). Returns the number of arguments consumed, 0 if `arg`
 * is not this option, -1 if the value is missing. */
static int match_opt(char **argv, int i, int argc, const char *name, const char **value)
{
    const char *a = argv[i];
    size_t n = strlen(name);
    if (strncmp(a, name, n))
        return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (i + 1 >= argc)
        return -1;
    *value = argv[i + 1];
    return 2;
}

/* One pass over argv: fills cfg; with `compact`, also removes the consumed
 * arguments and returns the new argc. Returns -1 on a missing value. */
static int scan_args(int ac, char **av, pld_config *cfg, int compact)
{
    static const struct {
        const char *name;
        int field; /* 0 platform, 1 devices, 2 transport, 3 ir_svg */
    } opts[] = {{"-p", 0},        {"--platform", 0},  {"-d", 1},      {"--device", 1},
                {"--devices", 1}, {"--transport", 2}, {"--ir-svg", 3}};
    int keep = 1;
    for (int i = 1; i < ac;) {
        if (!strcmp(av[i], "--ir")) {
            cfg->ir = 1;
            i++;
            continue;
        }
        int used = 0;
        for (size_t k = 0; k < sizeof opts / sizeof opts[0] && !used; k++) {
            const char *v = NULL;
            used = match_opt(av, i, ac, opts[k].name, &v);
            if (used < 0) {
                pld__init_fail(PLD_ERR_ARG, "option %s needs a value", opts[k].name);
                return -1;
            }
            if (used == 0)
                continue;
            if (opts[k].field == 0)
                cfg->platform = v;
            else if (opts[k].field == 1)
                cfg->devices = v;
            else if (opts[k].field == 2)
                cfg->transport = v;
            else
                cfg->ir_svg = v;
        }
        if (used) {
            i += used;
            continue;
        }
        if (compact)
            av[keep] = av[i];
        keep++;
        i++;
    }
    if (compact)
        av[keep] = NULL; /* argv[argc] stays NULL as C requires */
    return keep;
}

pld_status pld_config_from_args(pld_config *cfg, int *argc, char ***argv)
{
    if (!cfg || !argc || !argv || !*argv)
        return pld__init_fail(PLD_ERR_ARG, "pld_config_from_args: cfg, argc or argv is NULL");
    pld_config c = *cfg;
    if (scan_args(*argc, *argv, &c, 0) < 0)
        return PLD_ERR_ARG;
    *cfg = c;
    *argc = scan_args(*argc, *argv, &c, 1);
    return PLD_OK;
}

pld_status pld_world_init_from_args(pld_world **out, int *argc, char ***argv)
{
    pld_config cfg = {0};
    if (!argc || !argv || !*argv)
        return pld__init_fail(PLD_ERR_ARG, "pld_world_init_from_args: argc/argv is NULL");
    if (scan_args(*argc, *argv, &cfg, 0) < 0)
        return PLD_ERR_ARG;
    pld_status st = pld_world_init(out, &cfg);
    if (st != PLD_OK)
        return st;
    /* cfg's strings were copied by pld_world_init, so argv can move now. */
    *argc = scan_args(*argc, *argv, &cfg, 1);
    return PLD_OK;
}
