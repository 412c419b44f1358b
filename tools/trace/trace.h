/* kenaf-trace's recorded trajectory and its writers (CSV, SVG top view,
 * printed summary). Kept apart from the socket loop so tests can feed
 * samples directly. */
#ifndef KN_TRACE_H
#define KN_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "krp.h"
#include "svgplot.h"

struct kn_trace {
    struct kn_krp_status *s;
    size_t n, cap, max; /* max: samples kept at most; later ones counted */
    size_t dropped;
};

void kn_trace_init(struct kn_trace *t, size_t max);
void kn_trace_free(struct kn_trace *t);
/* Appends one STATUS; returns -1 (and counts it) when full or out of memory. */
int kn_trace_add(struct kn_trace *t, const struct kn_krp_status *st);

int kn_trace_write_csv(const struct kn_trace *t, FILE *f);
/* The top view (common/svgplot); robot: the footprint drawn at start and
 * end (NULL for none). */
int kn_trace_write_svg(const struct kn_trace *t, FILE *f, const char *title,
                       const struct kn_svgplot_robot *robot);
/* Waypoints every `every_s` seconds of robot time plus a summary. */
void kn_trace_print(const struct kn_trace *t, double every_s, FILE *f);

#endif
