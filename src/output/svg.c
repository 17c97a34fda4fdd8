/* output/svg.c: a dependency-free SVG scatter plot (y against x).
 *
 * Axes fit the data.  Each axis covers the finite values of its points plus a 5% margin (in log
 * space on a log axis), never going below zero when no value does.  An axis whose values are all
 * positive and span more than a decade (max / min > 10) is logarithmic, ticked at 1-2-5 times
 * powers of ten (powers of ten alone past three decades); otherwise it is linear, ticked at a
 * 1-2-5 step giving about five ticks.  One value (or all values equal) gets the range value/2 to
 * value*3/2 (0 to 1 for zero).  Each tick is a <g class="xtick|ytick"> holding its grid line and,
 * unless it had to be dropped, its label; each axis is a <g class="x-axis|y-axis"
 * data-scale="linear|log"> so tools can read the scale back.
 *
 * Guide rays y = slope * x (on a samples/s against $/h chart: lines of constant samples per
 * dollar) are drawn as <path>s clipped to the plot box: two points when both axes have the same
 * scale (the ray is straight on linear and on log-log axes), a polyline of 48 points on mixed
 * axes where it is a curve.  Frontier points are joined left to right (the one <polyline>).
 *
 * Labels never overlap.  Text extents are estimated, not measured (no font library): a string
 * of N characters at font size S is 0.62 * S * N wide (0.7 * S * N bold: DejaVu Sans averages
 * about 0.6 em per character), and spans S above its baseline and 0.3 * S below it; text-anchor
 * start/middle/end puts the box right of/around/left of x; the one rotated text (the y-axis
 * title, rotate(-90) about its anchor) has the box turned accordingly.  A character is a byte
 * that output_xml_escape keeps.  Every label is placed against the boxes placed before it:
 * fixed texts (titles, axis titles, the key, the legend) first, trimmed with "..." to fit the
 * canvas; then tick labels (one that would collide is dropped, its grid line kept); then the
 * guide-ray labels, then the point tags in the order given, each at the first of a list of
 * candidate positions (along the ray; around the point, then further out) inside the plot box
 * whose box hits no placed label and no point marker.  What finds no place is dropped: a point's
 * full label is always in its tooltip and in the key.  All text goes through output_xml_escape,
 * so the document is valid XML whatever the labels contain, and every number written is finite. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"

enum {
    W = 1300,
    H = 660,
    ML = 90,
    MR = 470,
    MT = 76,
    MB = 70,
    KEY_MAX = 34,
    KEY_LINE = 15,
    MAX_TICKS = 64,
    RAY_SAMPLES = 48
};
#define CHAR_EM 0.62 /* estimated advance per character, in font sizes */
#define CHAR_EM_BOLD 0.7
#define ASCENT 1.0  /* box above the baseline, in font sizes */
#define DESCENT 0.3 /* box below the baseline */

typedef struct box {
    double x0, y0, x1, y1;
} box;

typedef struct boxes {
    box *b;
    size_t n, cap;
} boxes;

static int boxes_add(boxes *s, box b)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        box *nb = realloc(s->b, cap * sizeof *nb);
        if (!nb) return -1;
        s->b = nb, s->cap = cap;
    }
    s->b[s->n++] = b;
    return 0;
}

static int hits(const box *a, const boxes *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (a->x0 < s->b[i].x1 && s->b[i].x0 < a->x1 && a->y0 < s->b[i].y1 && s->b[i].y0 < a->y1) return 1;
    return 0;
}

static int inside(const box *a, double x0, double y0, double x1, double y1)
{
    return a->x0 >= x0 && a->y0 >= y0 && a->x1 <= x1 && a->y1 <= y1;
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

/* The characters output_xml_escape shows for S. */
static size_t shown_chars(const char *s)
{
    size_t n = 0;
    for (; s && *s; s++)
        if ((unsigned char)*s >= 0x20 && *s != 0x7f) n++;
    return n;
}

/* S as shown, cut to at most MAX characters ("..." ending a cut one).  Malloc'd or NULL. */
static char *fit_text(const char *s, size_t max)
{
    size_t n = shown_chars(s);
    char *out = malloc((n < max ? n : max) + 4);
    if (!out) return NULL;
    size_t keep = n <= max ? n : max > 3 ? max - 3 : 0, k = 0;
    for (; s && *s && k < keep; s++)
        if ((unsigned char)*s >= 0x20 && *s != 0x7f) out[k++] = (unsigned char)*s < 0x80 ? *s : '?';
    if (n > max) memcpy(out + k, "...", 3), k += 3;
    out[k] = 0;
    return out;
}

typedef enum anchor { A_START, A_MIDDLE, A_END } anchor;

static box text_box(double x, double y, double fs, anchor a, size_t chars, int bold)
{
    double w = (bold ? CHAR_EM_BOLD : CHAR_EM) * fs * (double)chars;
    double x0 = a == A_START ? x : a == A_MIDDLE ? x - w / 2 : x - w;
    return (box){x0, y - ASCENT * fs, x0 + w, y + DESCENT * fs};
}

static void put_text(FILE *f, double x, double y, double fs, anchor a, const char *attrs, const char *s)
{
    static const char *const anchors[] = {"", " text-anchor=\"middle\"", " text-anchor=\"end\""};
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%g\"%s%s%s>", x, y, fs, anchors[a], attrs ? " " : "",
            attrs ? attrs : "");
    output_xml_escape(f, s);
    fputs("</text>\n", f);
}

/* A fixed text: trimmed to end by X_MAX (start anchor), always drawn, its box recorded. */
static int fixed_text(FILE *f, boxes *placed, double x, double y, double fs, int bold, double x_max, const char *attrs,
                      const char *s)
{
    size_t max = (size_t)fmax(4, floor((x_max - x) / ((bold ? CHAR_EM_BOLD : CHAR_EM) * fs)));
    char *t = fit_text(s, max);
    if (!t) return -1;
    put_text(f, x, y, fs, A_START, attrs, t);
    int rc = boxes_add(placed, text_box(x, y, fs, A_START, shown_chars(t), bold));
    free(t);
    return rc;
}

/* ---- axes ---- */

typedef struct axis {
    int log;
    double lo, hi; /* data range shown */
    double p0, p1; /* pixels of lo and hi */
    double ticks[MAX_TICKS];
    int n_ticks;
    int prec; /* significant digits of the tick labels */
} axis;

static double axis_px(const axis *a, double v)
{
    double t = a->log ? (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    return a->p0 + t * (a->p1 - a->p0);
}

/* The value at fraction T of the axis (0: lo, 1: hi). */
static double axis_at(const axis *a, double t)
{
    return a->log ? pow(10, log10(a->lo) + t * (log10(a->hi) - log10(a->lo))) : a->lo + t * (a->hi - a->lo);
}

/* 1, 2 or 5 times a power of ten, at least RANGE / 5: about five ticks per axis. */
static double nice_step(double range)
{
    double raw = range / 5, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void axis_fit(axis *a, const double *v, size_t n, double p0, double p1)
{
    double mn = INFINITY, mx = -INFINITY;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i])) mn = fmin(mn, v[i]), mx = fmax(mx, v[i]);
    *a = (axis){.p0 = p0, .p1 = p1, .prec = 6};
    if (!(mn <= mx)) mn = 0, mx = 1; /* no values: a plain 0..1 */
    if (mn > 0 && mx / mn > 10 && isfinite(mx / mn)) {
        double l0 = log10(mn), l1 = log10(mx), m = 0.05 * (l1 - l0);
        a->log = 1;
        a->lo = pow(10, l0 - m), a->hi = pow(10, l1 + m);
        double decades = l1 - l0 + 2 * m;
        static const double all[] = {1, 2, 5}, one[] = {1};
        const double *mant = decades <= 3 ? all : one;
        int n_mant = decades <= 3 ? 3 : 1, every = decades <= 8 ? 1 : (int)ceil(decades / 8);
        for (int e = (int)floor(log10(a->lo)); e <= (int)ceil(log10(a->hi)) && a->n_ticks < MAX_TICKS; e++) {
            if (n_mant == 1 && e % every) continue;
            for (int k = 0; k < n_mant && a->n_ticks < MAX_TICKS; k++) {
                double t = mant[k] * pow(10, e);
                if (t >= a->lo && t <= a->hi) a->ticks[a->n_ticks++] = t;
            }
        }
        return;
    }
    double span = mx - mn;
    if (!isfinite(span) || span <= 1e-12 * fmax(fabs(mn), fabs(mx))) {
        /* One value: centred in a range of its own size (0..1 for zero). */
        double c = isfinite(mn) ? mn : 0;
        if (c > 0) a->lo = c / 2, a->hi = 1.5 * c;
        else if (c < 0) a->lo = 1.5 * c, a->hi = c / 2;
        else a->lo = 0, a->hi = 1;
    } else {
        a->lo = mn - 0.05 * span, a->hi = mx + 0.05 * span;
        if (mn >= 0 && a->lo < 0) a->lo = 0;
        if (mx <= 0 && a->hi > 0) a->hi = 0;
    }
    double step = nice_step(a->hi - a->lo);
    for (double k = ceil(a->lo / step); k * step <= a->hi * (1 + 1e-12) + 1e-300 && a->n_ticks < MAX_TICKS; k++) {
        double t = k * step;
        if (fabs(t) < step * 1e-9) t = 0;
        a->ticks[a->n_ticks++] = t;
    }
    /* Six significant digits, more when neighbouring ticks would otherwise read the same. */
    double big = fmax(fabs(a->lo), fabs(a->hi));
    a->prec = (int)fmin(17, fmax(6, ceil(log10(big / step)) + 1));
}

static void fmt_tick(char *buf, size_t n, double v, int prec)
{
    double m = fabs(v);
    if (m >= 1e6) snprintf(buf, n, "%.*gM", prec, v / 1e6);
    else if (m >= 1e4) snprintf(buf, n, "%.*gk", prec, v / 1e3);
    else snprintf(buf, n, "%.*g", prec, v);
}

/* One axis's group: per tick its grid line across the plot box [px0, px1] x [py0, py1] and its
 * label (x: centred under the box; y: right-aligned left of it), the label dropped, its line kept,
 * when it would collide with a text already placed.  -1: out of memory. */
static int draw_ticks(FILE *f, const axis *a, int x_axis, double px0, double px1, double py0, double py1, boxes *placed)
{
    char t[48];
    fprintf(f, "<g class=\"%s\" data-scale=\"%s\">\n", x_axis ? "x-axis" : "y-axis", a->log ? "log" : "linear");
    for (int i = 0; i < a->n_ticks; i++) {
        const double p = axis_px(a, a->ticks[i]);
        const double tx = x_axis ? p : ML - 6, ty = x_axis ? py1 + 16 : p + 4;
        fmt_tick(t, sizeof t, a->ticks[i], a->prec);
        fprintf(f, "<g class=\"%s\"><line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#e5e5e5\"/>",
                x_axis ? "xtick" : "ytick", x_axis ? p : px0, x_axis ? py0 : p, x_axis ? p : px1, x_axis ? py1 : p);
        box b = text_box(tx, ty, 11, x_axis ? A_MIDDLE : A_END, strlen(t), 0);
        if (!hits(&b, placed) && inside(&b, 0, 0, W, H)) {
            if (boxes_add(placed, b)) return -1;
            fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"11\" text-anchor=\"%s\">%s</text>", tx, ty,
                    x_axis ? "middle" : "end", t);
        }
        fputs("</g>\n", f);
    }
    fputs("</g>\n", f);
    return 0;
}

static int cmp_x(const void *a, const void *b)
{
    const output_point *p = *(const output_point *const *)a, *q = *(const output_point *const *)b;
    return (p->x > q->x) - (p->x < q->x);
}

static int finite_point(const output_point *q) { return isfinite(q->x) && isfinite(q->y); }

/* Guide rays, clipped to the plot box (px0..px1 x py0..py1): y = k x is increasing, so the part
 * shown is x in [max(xlo, ylo / k), min(xhi, yhi / k)].  0, or -1 out of memory. */
static int draw_rays(FILE *f, const output_plot *p, const axis *ax, const axis *ay, double px0, double py0, double px1,
                     double py1, boxes *placed, const boxes *markers)
{
    for (size_t i = 0; i < p->n_rays; i++) {
        double k = p->rays[i].slope;
        if (!(isfinite(k) && k > 0)) continue;
        double xa = fmax(ax->lo, ay->lo / k), xb = fmin(ax->hi, ay->hi / k);
        if (!(xa < xb) || (ax->log && xa <= 0)) continue;
        axis sx = *ax; /* the x axis restricted to [xa, xb] */
        sx.lo = xa, sx.hi = xb;
        int ns = ax->log == ay->log ? 2 : RAY_SAMPLES;
        fputs("<path class=\"iso\" fill=\"none\" stroke=\"#9ab\" stroke-dasharray=\"5,4\" d=\"", f);
        for (int s = 0; s < ns; s++) {
            double x = s == 0 ? xa : s == ns - 1 ? xb : axis_at(&sx, (double)s / (ns - 1));
            double y = fmin(fmax(k * x, ay->lo), ay->hi);
            fprintf(f, "%s%.2f,%.2f", s ? " L" : "M", axis_px(ax, x), axis_px(ay, y));
        }
        fputs("\"/>\n", f);
        /* Its label: beside the ray (above-left or below-right of a point on it, so the box never
         * crosses it), trying points from the top end down. */
        const char *l = p->rays[i].label;
        if (!l || !*l) continue;
        size_t nc = shown_chars(l);
        for (int c = 0; c < 2 * 19; c++) {
            double frac = 0.95 - 0.05 * (c / 2);
            double x = axis_at(&sx, frac), y = k * x, qx = axis_px(ax, x), qy = axis_px(ay, y);
            box b = c % 2 == 0 ? text_box(qx - 3, qy - 3 - DESCENT * 10, 10, A_END, nc, 0)
                               : text_box(qx + 3, qy + 3 + ASCENT * 10, 10, A_START, nc, 0);
            if (!inside(&b, px0 + 1, py0 + 1, px1 - 1, py1 - 1) || hits(&b, placed) || hits(&b, markers)) continue;
            if (boxes_add(placed, b)) return -1;
            put_text(f, c % 2 == 0 ? qx - 3 : qx + 3, c % 2 == 0 ? qy - 3 - DESCENT * 10 : qy + 3 + ASCENT * 10, 10,
                     c % 2 == 0 ? A_END : A_START, "fill=\"#678\" class=\"iso-label\"", l);
            break;
        }
    }
    return 0;
}

/* Each point's tag: the first candidate place around its marker, at growing distance, that is
 * inside the plot box and free of texts and markers.  0, or -1 out of memory. */
static int draw_tags(FILE *f, const output_plot *p, const axis *ax, const axis *ay, double px0, double py0, double px1,
                     double py1, boxes *placed, const boxes *markers)
{
    size_t np = p->n_points;
    for (size_t i = 0; i < np; i++) {
        const output_point *q = &p->points[i];
        if (!finite_point(q)) continue;
        const char *tag = q->tag ? q->tag : q->label;
        size_t nc = shown_chars(tag);
        if (!nc) continue;
        double cx = axis_px(ax, q->x), cy = axis_px(ay, q->y), r = q->frontier ? 6 : 4, fs = 11;
        /* (anchor, dx, baseline dy) at distance d from the marker */
        for (int c = 0; c < 8 * 4; c++) {
            double d = 2 + 10 * (c / 8), a = r + d;
            double cand[8][3] = {{A_START, a, 0.35 * fs},          {A_END, -a, 0.35 * fs},
                                 {A_START, a * 0.7, -a * 0.7},     {A_START, a * 0.7, a * 0.7 + ASCENT * fs},
                                 {A_END, -a * 0.7, -a * 0.7},      {A_END, -a * 0.7, a * 0.7 + ASCENT * fs},
                                 {A_MIDDLE, 0, -a - DESCENT * fs}, {A_MIDDLE, 0, a + ASCENT * fs}};
            const double *o = cand[c % 8];
            box b = text_box(cx + o[1], cy + o[2], fs, (anchor)o[0], nc, 0);
            if (!inside(&b, px0 + 1, py0 + 1, px1 - 1, py1 - 1) || hits(&b, placed) || hits(&b, markers)) continue;
            if (boxes_add(placed, b)) return -1;
            put_text(f, cx + o[1], cy + o[2], fs, (anchor)o[0], "class=\"tag\"", tag);
            break;
        }
    }
    return 0;
}

int output_svg_scatter(const output_plot *p, char **svg, size_t *len, ib_error *err)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&buf, &size);
    if (!f) return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory rendering SVG");
    int rc = 0;
    size_t np = p->n_points;
    double *xs = malloc((np ? np : 1) * sizeof *xs), *ys = malloc((np ? np : 1) * sizeof *ys);
    const output_point **fr = malloc((np ? np : 1) * sizeof *fr);
    boxes placed = {0}, markers = {0};
    if (!xs || !ys || !fr) goto oom;

    /* Only points with both coordinates finite are drawn, and they alone set the ranges. */
    for (size_t i = 0; i < np; i++) {
        int ok = finite_point(&p->points[i]);
        xs[i] = ok ? p->points[i].x : NAN;
        ys[i] = ok ? p->points[i].y : NAN;
    }
    const double pw = W - ML - MR, ph = H - MT - MB, px0 = ML, px1 = ML + pw, py0 = MT, py1 = MT + ph;
    axis ax, ay;
    axis_fit(&ax, xs, np, px0, px1);
    axis_fit(&ay, ys, np, py1, py0);

    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            W, H, W, H);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H);

    /* Fixed texts first: they are always drawn, trimmed to the canvas. */
    if (fixed_text(f, &placed, 20, 30, 18, 1, W - 4, "font-weight=\"bold\"", p->title)) goto oom;
    if (p->subtitle && fixed_text(f, &placed, 20, 52, 12, 0, W - 4, "fill=\"#555\"", p->subtitle)) goto oom;
    {
        char *t = fit_text(p->x_label, (size_t)(pw / (CHAR_EM * 13)));
        if (!t) goto oom;
        put_text(f, ML + pw / 2, H - 22, 13, A_MIDDLE, NULL, t);
        if (boxes_add(&placed, text_box(ML + pw / 2, H - 22, 13, A_MIDDLE, shown_chars(t), 0))) rc = -1;
        free(t);
        if (rc) goto oom;
        /* The y title runs upwards along the left edge: its box is the rotated one. */
        t = fit_text(p->y_label, (size_t)(ph / (CHAR_EM * 13)));
        if (!t) goto oom;
        double cy = MT + ph / 2, w = CHAR_EM * 13 * (double)shown_chars(t);
        fprintf(f,
                "<text x=\"22\" y=\"%.2f\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 22 %.2f)\">",
                cy, cy);
        output_xml_escape(f, t);
        fputs("</text>\n", f);
        free(t);
        if (boxes_add(&placed, (box){22 - ASCENT * 13, cy - w / 2, 22 + DESCENT * 13, cy + w / 2})) goto oom;
    }
    if (p->legend && fixed_text(f, &placed, ML, H - 6, 11, 0, W - 4, "fill=\"#d62728\"", p->legend)) goto oom;
    if (p->key_title && np) {
        double kx = px1 + 24, ky = MT + 4;
        if (fixed_text(f, &placed, kx, ky, 12, 1, W - 4, "font-weight=\"bold\" class=\"key\"", p->key_title)) goto oom;
        for (size_t i = 0; i < np && i < KEY_MAX; i++)
            if (fixed_text(f, &placed, kx, ky + 16 + (double)KEY_LINE * (double)i, 11, 0, W - 4,
                           p->points[i].frontier ? "fill=\"#d62728\" class=\"key\"" : "class=\"key\"",
                           p->points[i].label))
                goto oom;
        if (np > KEY_MAX) {
            char more[64];
            snprintf(more, sizeof more, "... and %zu more", np - KEY_MAX);
            if (fixed_text(f, &placed, kx, ky + 16 + (double)KEY_LINE * KEY_MAX, 11, 0, W - 4, "class=\"key\"", more))
                goto oom;
        }
    }
    size_t n_drawn = 0;
    for (size_t i = 0; i < np; i++) n_drawn += finite_point(&p->points[i]) != 0;
    if (n_drawn == 0) {
        put_text(f, ML + pw / 2, MT + ph / 2, 14, A_MIDDLE, NULL, "no priced configurations");
        if (boxes_add(&placed, text_box(ML + pw / 2, MT + ph / 2, 14, A_MIDDLE, 24, 0))) goto oom;
    }

    /* Grid and ticks; a tick label that would collide with another is dropped. */
    if (draw_ticks(f, &ax, 1, px0, px1, py0, py1, &placed) || draw_ticks(f, &ay, 0, px0, px1, py0, py1, &placed))
        goto oom;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>\n", ML, MT, pw,
            ph);

    /* Point markers are obstacles for the labels placed inside the plot. */
    for (size_t i = 0; i < np; i++) {
        if (!finite_point(&p->points[i])) continue;
        double cx = axis_px(&ax, p->points[i].x), cy = axis_px(&ay, p->points[i].y), r = p->points[i].frontier ? 6 : 4;
        if (boxes_add(&markers, (box){cx - r, cy - r, cx + r, cy + r})) goto oom;
    }

    if (n_drawn && draw_rays(f, p, &ax, &ay, px0, py0, px1, py1, &placed, &markers)) goto oom;

    /* Frontier line through the frontier points in x order. */
    size_t nf = 0;
    for (size_t i = 0; i < np; i++)
        if (p->points[i].frontier && finite_point(&p->points[i])) fr[nf++] = &p->points[i];
    if (nf > 1) {
        qsort(fr, nf, sizeof *fr, cmp_x);
        fputs("<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" points=\"", f);
        for (size_t i = 0; i < nf; i++)
            fprintf(f, "%s%.2f,%.2f", i ? " " : "", axis_px(&ax, fr[i]->x), axis_px(&ay, fr[i]->y));
        fputs("\"/>\n", f);
    }

    /* Points, then their tags: the first candidate around the point that is free. */
    for (size_t i = 0; i < np; i++) {
        const output_point *q = &p->points[i];
        if (!finite_point(q)) continue;
        const char *color = q->frontier ? "#d62728" : "#1f77b4";
        fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%d\" fill=\"%s\" stroke=\"%s\"%s><title>", axis_px(&ax, q->x),
                axis_px(&ay, q->y), q->frontier ? 6 : 4, q->hollow ? "#fff" : color, q->hollow ? color : "#222",
                q->hollow ? " stroke-width=\"2\" stroke-dasharray=\"2 1.5\" class=\"extrapolated\"" : "");
        output_xml_escape(f, q->label);
        fputs("</title></circle>\n", f);
    }
    if (draw_tags(f, p, &ax, &ay, px0, py0, px1, py1, &placed, &markers)) goto oom;
    fputs("</svg>\n", f);
    goto done;
oom:
    rc = -1;
done:
    free(xs), free(ys), free(fr), free(placed.b), free(markers.b);
    if (fclose(f) != 0 || !buf || rc) {
        free(buf);
        return ib_error_set(err, IB_EXIT_RUNTIME, "out of memory rendering SVG");
    }
    *svg = buf;
    *len = size;
    return 0;
}
