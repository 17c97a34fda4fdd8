/* output/svg.c: a dependency-free SVG scatter plot (y against x, both axes from zero).
 *
 * Axes start at zero so guide rays y = slope * x through the origin are meaningful: on a
 * samples/s against $/h chart a ray is a line of constant samples per dollar.  Frontier points are
 * joined left to right.  All text goes through output_xml_escape, so the document is valid XML
 * whatever the labels contain. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"

enum { W = 1300, H = 660, ML = 90, MR = 470, MT = 76, MB = 70, KEY_MAX = 40 };

/* Point tags are placed greedily: the first of a few offsets whose box overlaps no tag placed
 * before, so clustered points stay readable.  Boxes are estimated (6.5 px per character). */
typedef struct box { double x0, y0, x1, y1; } box;

static int overlaps(const box *a, const box *placed, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a->x0 < placed[i].x1 && placed[i].x0 < a->x1 && a->y0 < placed[i].y1 && placed[i].y0 < a->y1) return 1;
    return 0;
}

void output_xml_escape(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            /* XML 1.0 forbids most control characters and a viewer has no use for the others:
             * dropped.  Non-ASCII bytes could be invalid UTF-8: shown as '?'. */
            if (c >= 0x20 && c != 0x7f) fputc(c < 0x80 ? c : '?', out);
        }
    }
}

/* 1, 2 or 5 times a power of ten, at least X / 5: about five ticks per axis. */
static double nice_step(double max)
{
    double raw = max / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void fmt_tick(char *buf, size_t n, double v)
{
    if (v >= 1e6) snprintf(buf, n, "%gM", v / 1e6);
    else if (v >= 1e4) snprintf(buf, n, "%gk", v / 1e3);
    else snprintf(buf, n, "%g", v);
}

static int cmp_x(const void *a, const void *b)
{
    const output_point *p = *(const output_point *const *)a, *q = *(const output_point *const *)b;
    return (p->x > q->x) - (p->x < q->x);
}

int output_svg_scatter(const output_plot *p, char **svg, size_t *len, ib_error *err)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory rendering SVG");

    double xmax = 0, ymax = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        if (isfinite(p->points[i].x) && p->points[i].x > xmax) xmax = p->points[i].x;
        if (isfinite(p->points[i].y) && p->points[i].y > ymax) ymax = p->points[i].y;
    }
    /* Headroom for labels; a sane range even with no points. */
    xmax = xmax > 0 ? xmax * 1.1 : 1;
    ymax = ymax > 0 ? ymax * 1.1 : 1;
    double xs = nice_step(xmax), ys = nice_step(ymax);
    xmax = ceil(xmax / xs) * xs;
    ymax = ceil(ymax / ys) * ys;
    const double pw = W - ML - MR, ph = H - MT - MB;
#define PX(x) (ML + (x) / xmax * pw)
#define PY(y) (MT + ph - (y) / ymax * ph)

    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
               "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);
    fputs("<text x=\"20\" y=\"30\" font-size=\"18\" font-weight=\"bold\">", f);
    output_xml_escape(f, p->title);
    fputs("</text>\n", f);
    if (p->subtitle) {
        fputs("<text x=\"20\" y=\"52\" font-size=\"12\" fill=\"#555\">", f);
        output_xml_escape(f, p->subtitle);
        fputs("</text>\n", f);
    }

    /* Grid and ticks. */
    char t[32];
    for (double v = 0; v <= xmax * (1 + 1e-9); v += xs) {
        fmt_tick(t, sizeof t, v);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e5e5e5\"/>\n", PX(v), MT, PX(v),
                MT + ph);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"middle\">%s</text>\n", PX(v),
                MT + ph + 16, t);
    }
    for (double v = 0; v <= ymax * (1 + 1e-9); v += ys) {
        fmt_tick(t, sizeof t, v);
        fprintf(f, "<line x1=\"%d\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e5e5e5\"/>\n", ML, PY(v), ML + pw,
                PY(v));
        fprintf(f, "<text x=\"%d\" y=\"%.2f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n", ML - 6, PY(v) + 4,
                t);
    }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n", ML, MT,
            pw, ph);
    fprintf(f, "<text x=\"%.2f\" y=\"%d\" font-size=\"13\" text-anchor=\"middle\">", ML + pw / 2, H - 22);
    output_xml_escape(f, p->x_label);
    fprintf(f, "</text>\n<text x=\"22\" y=\"%.2f\" font-size=\"13\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 22 %.2f)\">",
            MT + ph / 2, MT + ph / 2);
    output_xml_escape(f, p->y_label);
    fputs("</text>\n", f);

    /* Guide rays, clipped to the plot box. */
    for (size_t i = 0; i < p->n_rays; i++) {
        double k = p->rays[i].slope;
        if (!(isfinite(k) && k > 0)) continue;
        double xe = fmin(xmax, ymax / k), ye = k * xe;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#9ab\" stroke-dasharray=\"5,4\"/>\n",
                PX(0), PY(0), PX(xe), PY(ye));
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"10\" fill=\"#678\">", PX(xe) + 4, PY(ye) + (xe < xmax ? 12 : 3));
        output_xml_escape(f, p->rays[i].label);
        fputs("</text>\n", f);
    }

    /* Frontier line through the frontier points in x order. */
    const output_point **fr = malloc((p->n_points ? p->n_points : 1) * sizeof *fr);
    size_t nf = 0;
    for (size_t i = 0; fr && i < p->n_points; i++)
        if (p->points[i].frontier && isfinite(p->points[i].x) && isfinite(p->points[i].y)) fr[nf++] = &p->points[i];
    if (nf > 1) {
        qsort(fr, nf, sizeof *fr, cmp_x);
        fputs("<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"", f);
        for (size_t i = 0; i < nf; i++) fprintf(f, "%s%.2f,%.2f", i ? " " : "", PX(fr[i]->x), PY(fr[i]->y));
        fputs("\"/>\n", f);
    }
    free(fr);

    box *placed = malloc((p->n_points ? p->n_points : 1) * sizeof *placed);
    size_t n_placed = 0;
    for (size_t i = 0; i < p->n_points; i++) {
        const output_point *q = &p->points[i];
        if (!isfinite(q->x) || !isfinite(q->y)) continue;
        double cx = PX(q->x), cy = PY(q->y);
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%d\" fill=\"%s\" stroke=\"#222\"><title>", cx, cy,
                q->frontier ? 6 : 4, q->frontier ? "#d62728" : "#1f77b4");
        output_xml_escape(f, q->label);
        fputs("</title></circle>\n", f);
        const char *tag = q->tag ? q->tag : q->label;
        double w = 6.5 * (double)strlen(tag ? tag : ""), h = 12;
        static const double off[][2] = {{8, -4}, {8, 10}, {-8, -4}, {-8, 10}, {8, -16}, {-8, -16}, {8, 22}, {-8, 22}};
        box b = {0};
        int k = 0;
        for (; k < 8; k++) {
            double x0 = off[k][0] > 0 ? cx + off[k][0] : cx + off[k][0] - w;
            b = (box){x0, cy + off[k][1] - h + 2, x0 + w, cy + off[k][1] + 2};
            if (!placed || !overlaps(&b, placed, n_placed)) break;
        }
        if (k == 8) b = (box){cx + 8, cy - 14, cx + 8 + w, cy - 2};
        if (placed) placed[n_placed++] = b;
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\">", b.x0, b.y1 - 2);
        output_xml_escape(f, tag);
        fputs("</text>\n", f);
    }
    free(placed);
    if (p->key_title && p->n_points) {
        double kx = ML + pw + 110, ky = MT + 4;  /* clear of the ray labels */
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"12\" font-weight=\"bold\">", kx, ky);
        output_xml_escape(f, p->key_title);
        fputs("</text>\n", f);
        for (size_t i = 0; i < p->n_points && i < KEY_MAX; i++) {
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\"%s>", kx, ky + 16 + 13.0 * (double)i,
                    p->points[i].frontier ? " fill=\"#d62728\"" : "");
            output_xml_escape(f, p->points[i].label);
            fputs("</text>\n", f);
        }
        if (p->n_points > KEY_MAX)
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\">... and %zu more</text>\n", kx,
                    ky + 16 + 13.0 * KEY_MAX, p->n_points - KEY_MAX);
    }
    if (p->n_points == 0)
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"14\" text-anchor=\"middle\">no priced configurations</text>\n",
                ML + pw / 2, MT + ph / 2);
    if (p->legend) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\" fill=\"#d62728\">", ML, H - 6);
        output_xml_escape(f, p->legend);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
#undef PX
#undef PY
    if (fclose(f) != 0 || !buf) {
        free(buf);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory rendering SVG");
    }
    *svg = buf;
    *len = size;
    return 0;
}
