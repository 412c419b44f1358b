/* svgcheck: checks an SVG file the way the plot tests do (plotcheck.h),
 * for the tests that make real plots (the demo's trajectory, an engine
 * run). Prints what failed and exits 1, else exits 0.
 *   svgcheck [--footprint L,W] [--fill SHARE] [--either-way] FILE */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plotcheck.h"
#include "xmlread.h"

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "footprint", required_argument, NULL, 'f' },
        { "fill", required_argument, NULL, 'F' },
        { "either-way", no_argument, NULL, 'e' },
        { NULL, 0, NULL, 0 },
    };
    struct pc_want want = { 0.50, 0.30, 0.7, true };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (sscanf(optarg, "%lf,%lf", &want.length, &want.width) != 2)
                return 2;
            break;
        case 'F': want.fill = atof(optarg); break;
        case 'e': want.both_ways = false; break;
        default: return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: svgcheck [--footprint L,W] [--fill SHARE] [--either-way] FILE\n");
        return 2;
    }
    const char *path = argv[optind];
    size_t len;
    char *buf = x_read_file(path, &len);
    if (!buf) {
        fprintf(stderr, "svgcheck: %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct x_doc d;
    const char *why = x_parse(buf, len, &d) != 0 ? d.err : pc_check_plot(&d, &want);
    if (why)
        fprintf(stderr, "svgcheck: %s: %s\n", path, why);
    else
        printf("svgcheck: %s: a readable plot\n", path);
    x_free(&d);
    free(buf);
    return why ? 1 : 0;
}
