/* SPDX-License-Identifier: Apache-2.0 */
/* The protocol picture's file (--ir-svg FILE): after every launch the host
 * reads the ranks' part files, draws the launch below the earlier ones
 * (src/trace/ir_svg_draw.c) and rewrites the whole SVG, so the file is
 * complete after every launch -- as the trace is. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/ir_rec.h"

struct pld__svg {
    pld__svg_text body; /* the launches drawn so far */
    int width, height, launches;
};

static const char style[] = "<style>\n"
                            "text{font-family:monospace;font-size:11px;fill:#222}\n"
                            /* a white rim keeps a label readable where arrows cross it */
                            ".op,.callname,.ret{paint-order:stroke;stroke:#fff;stroke-width:3px;"
                            "stroke-linejoin:round}\n"
                            ".title{font-size:14px;font-weight:bold}\n"
                            ".legend{fill:#555}\n"
                            ".lanename{font-weight:bold}\n"
                            ".lane{stroke:#888;stroke-width:1}\n"
                            ".mark{fill:#333}\n"
                            ".put{stroke:#1f66c2;stroke-width:1.4}\n"
                            ".get{stroke:#1b8a3a;stroke-width:1.4}\n"
                            ".notify{stroke:#c62828;stroke-width:1.2}\n"
                            ".unmatched{stroke-dasharray:4 3}\n"
                            ".band{fill:#fff1b8;fill-opacity:0.6;stroke:#e0c060}\n"
                            ".bandname{fill:#9a7b00;font-size:10px}\n"
                            ".call{fill:#eef0fa;fill-opacity:0.7;stroke:#6a6fa8}\n"
                            ".open{stroke-dasharray:5 3}\n"
                            ".callname{font-weight:bold;fill:#3b3f7a}\n"
                            ".ret{fill:#777}\n"
                            ".note{fill:#a00}\n"
                            "</style>\n";

/* One arrowhead per kind of arrow, in its colour. */
static void markers(FILE *f)
{
    static const struct {
        const char *id, *colour;
    } m[] = {{"a-put", "#1f66c2"}, {"a-get", "#1b8a3a"}, {"a-notify", "#c62828"}};
    fputs("<defs>\n", f);
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        fprintf(f,
                "<marker id=\"%s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
                "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
                "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"%s\"/></marker>\n",
                m[i].id, m[i].colour);
    fputs("</defs>\n", f);
}

/* Rewrites the file from the launches drawn so far; the errno of a failure. */
static int write_svg(const pld_world *w, const struct pld__svg *s)
{
    FILE *f = fopen(w->ir_svg_path, "w");
    if (!f)
        return errno;
    errno = 0;
    int width = s && s->width ? s->width : 400, height = s && s->height ? s->height : 40;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\">\n",
            width, height, width, height);
    markers(f);
    fputs(style, f);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", width, height);
    if (s && s->body.n)
        fwrite(s->body.s, 1, s->body.n, f);
    else
        fputs("<text x=\"10\" y=\"24\">no launch yet</text>\n", f);
    fputs("</svg>\n", f);
    int err = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    return err;
}

pld_status pld__svg_world_ready(pld_world *w)
{
    if (!w->ir_svg_path)
        return PLD_OK;
    int first, count;
    w->tp->hosted_ranks(w, &first, &count);
    if (count != w->nranks) {
        /* the picture needs every rank's events in one place; a process
         * hosting one rank has only its own */
        if (pld_is_root_process(w))
            fprintf(stderr,
                    "pld: --ir-svg: the '%s' transport runs the ranks in separate processes "
                    "that see only their own events; no picture is drawn (use --transport "
                    "thread or process)\n",
                    w->tp->name);
        free(w->ir_svg_path);
        w->ir_svg_path = NULL;
        return PLD_OK;
    }
    if (!(w->svg = calloc(1, sizeof *w->svg)))
        return pld__init_fail(PLD_ERR_NOMEM, "pld_world_init: out of memory");
    int err = write_svg(w, NULL);
    if (err)
        return pld__init_fail(PLD_ERR_ARG,
                              "pld_world_init: --ir-svg file '%s' cannot be written: %s",
                              w->ir_svg_path, strerror(err));
    return PLD_OK;
}

pld_status pld__svg_flush(pld_world *w, pld_status st)
{
    struct pld__svg *s = w->svg;
    if (!w->ir_svg_path || !s)
        return st;
    int P = w->nranks;
    pld__rec_ev **ev = calloc((size_t)P, sizeof *ev);
    int64_t *n = calloc((size_t)P, sizeof *n), *dropped = calloc((size_t)P, sizeof *dropped);
    int nomem = !ev || !n || !dropped;
    for (int r = 0; r < P && !nomem; r++) {
        char path[4096];
        pld__rec_part_path(w, r, path, sizeof path);
        if (access(path, F_OK) != 0 || pld__rec_read_part(path, &ev[r], &n[r], &dropped[r]))
            n[r] = -1; /* the rank never wrote it (it died) or it is cut short */
        unlink(path);
    }
    if (!nomem) {
        char title[256];
        s->launches++;
        if (st == PLD_OK)
            snprintf(title, sizeof title, "launch %d: %d ranks, %s", s->launches, P,
                     w->profile.name);
        else
            snprintf(title, sizeof title, "launch %d: %d ranks, %s -- failed with %s", s->launches,
                     P, w->profile.name, pld_status_name(st));
        int width = 0;
        s->height += pld__svg_draw_launch(&s->body, s->height, title, P, w->device_ids, ev, n,
                                          dropped, &width);
        if (width > s->width)
            s->width = width;
    }
    for (int r = 0; ev && r < P; r++)
        free(ev[r]);
    free(ev), free(n), free(dropped);
    int err = write_svg(w, s);
    if (!err && !nomem)
        return st;
    char why[1024];
    if (err)
        snprintf(why, sizeof why, "--ir-svg file '%s' cannot be written: %s", w->ir_svg_path,
                 strerror(err));
    else
        snprintf(why, sizeof why, "out of memory drawing --ir-svg file '%s'", w->ir_svg_path);
    if (st != PLD_OK) { /* the launch's own failure stays the status */
        size_t k = strlen(w->errmsg);
        snprintf(w->errmsg + k, sizeof w->errmsg - k, " [%s]", why);
        return st;
    }
    return pld__world_fail(w, err ? PLD_ERR_SYSTEM : PLD_ERR_NOMEM, "pld_launch: %s", why);
}

void pld__svg_free(pld_world *w)
{
    if (w->svg)
        free(w->svg->body.s);
    free(w->svg);
    w->svg = NULL;
    free(w->ir_svg_path);
    w->ir_svg_path = NULL;
}
