/* Writes charts from output_svg_scatter for inputs `rank` never hands it (a zero or non-finite
 * price, negative values, every point equal, extreme ranges, long labels) into DIR as CASE.svg,
 * with CASE.json giving the finite points drawn; tests/svg_plot.py checks them.
 * Usage: svg_plot_cases DIR */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instbench/output.h"

static int write_case(const char *dir, const char *name, const output_point *pts, size_t n, int rays)
{
    output_ray r[3] = {{1.0, "iso 1"}, {100.0, "iso 100"}, {INFINITY, "iso inf"}};
    output_plot p = {"degenerate: ", "subtitle", "x", "y", pts, n, r, rays ? 3 : 0, "legend", "key"};
    char *svg = NULL, path[4096];
    size_t len = 0;
    ib_error err = {0};
    p.title = name;
    if (output_svg_scatter(&p, &svg, &len, &err) != 0) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    snprintf(path, sizeof path, "%s/%s.svg", dir, name);
    FILE *f = fopen(path, "w");
    if (!f || fwrite(svg, 1, len, f) != len || fclose(f) != 0) return 1;
    free(svg);
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    f = fopen(path, "w");
    if (!f) return 1;
    fputs("{", f);
    int first = 1;
    for (size_t i = 0; i < n; i++)
        if (isfinite(pts[i].x) && isfinite(pts[i].y)) {
            fprintf(f, "%s\"%s\": [%.17g, %.17g]", first ? "" : ", ", pts[i].label, pts[i].x, pts[i].y);
            first = 0;
        }
    fputs("}\n", f);
    return fclose(f) != 0;
}

#define P(x, y, l, fr)     \
    {                      \
        x, y, l, "#" l, fr \
    }

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const char *d = argv[1];
    int bad = 0;
    output_point zero[] = {P(0.0, 100, "1", 1), P(1.0, 300, "2", 1), P(2.0, 500, "3", 0)};
    bad |= write_case(d, "zero_price", zero, 3, 1);
    output_point zero_only[] = {P(0.0, 100, "1", 1)};
    bad |= write_case(d, "zero_price_only", zero_only, 1, 1);
    output_point missing[] = {P(NAN, 100, "1", 1), P(1.0, INFINITY, "2", 0), P(2.0, 400, "3", 1), P(3.0, 500, "4", 0)};
    bad |= write_case(d, "missing_price", missing, 4, 1);
    output_point none[] = {P(NAN, NAN, "1", 1), P(INFINITY, -INFINITY, "2", 1)};
    bad |= write_case(d, "no_finite_point", none, 2, 1);
    bad |= write_case(d, "empty", NULL, 0, 1);
    output_point one[] = {P(2.5, 1234, "1", 1)};
    bad |= write_case(d, "one_point", one, 1, 1);
    output_point same_x[] = {P(2.0, 100, "1", 1), P(2.0, 300, "2", 1), P(2.0, 3000, "3", 0)};
    bad |= write_case(d, "equal_x", same_x, 3, 1);
    output_point same_y[] = {P(1.0, 500, "1", 1), P(4.0, 500, "2", 0), P(90.0, 500, "3", 0)};
    bad |= write_case(d, "equal_y", same_y, 3, 1);
    output_point same[] = {P(3.0, 700, "1", 1), P(3.0, 700, "2", 0), P(3.0, 700, "3", 0), P(3.0, 700, "4", 0)};
    bad |= write_case(d, "all_equal", same, 4, 1);
    output_point negative[] = {P(-2.0, -50, "1", 1), P(3.0, 40, "2", 0), P(-1.0, 10, "3", 0)};
    bad |= write_case(d, "negative", negative, 3, 1);
    output_point wide[] = {P(1e-6, 1e-3, "1", 1), P(1e5, 1e9, "2", 1), P(3.0, 40, "3", 0)};
    bad |= write_case(d, "twelve_decades", wide, 3, 1);
    output_point tiny_span[] = {P(1234567.0, 1e6, "1", 1), P(1234567.5, 1e6 + 0.25, "2", 0)};
    bad |= write_case(d, "tiny_span", tiny_span, 2, 1);
    /* Many clustered points with long labels: tags and iso labels must still not collide. */
    static output_point crowd[120];
    static char labels[120][400], tags[120][16];
    for (int i = 0; i < 120; i++) {
        snprintf(labels[i], sizeof labels[i], "c%d %s", i,
                 "a very long configuration name that will not fit beside the plot at all, not even nearly, "
                 "<&> and so on and so forth");
        snprintf(tags[i], sizeof tags[i], "#%d", i + 1);
        /* 115 points within 2 px of each other, 5 spread far out (both axes log) */
        crowd[i] = i < 115 ? (output_point){1.0 + 0.0001 * i, 100.0 + 0.01 * (i % 7), labels[i], tags[i], i < 3}
                           : (output_point){2.0 * (i - 113), 150.0 * (i - 113) * (i - 113), labels[i], tags[i], 0};
    }
    bad |= write_case(d, "crowd", crowd, 120, 1);
    return bad;
}
