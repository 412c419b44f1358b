/* What svgplot.c (the frame and the drawing primitives) shares with
 * svgplot_track.c (trajectories); not for other callers. */
#ifndef KN_SVGPLOT_INT_H
#define KN_SVGPLOT_INT_H

#include "svgplot.h"

/* Colours: one per meaning, the same in every plot. */
#define KN_SVGPLOT_PATH_COLOUR "#1f77b4"
#define KN_SVGPLOT_START_COLOUR "#2ca02c"
#define KN_SVGPLOT_END_COLOUR "#d62728"
#define KN_SVGPLOT_HEADING_COLOUR "#ff7f0e"
#define KN_SVGPLOT_LABEL_COLOUR "#333333"

/* fprintf with '.' decimals; marks the plot failed on a write error. */
void kn_svgplot_out(const struct kn_svgplot *p, FILE *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* snprintf with '.' decimals, for numbers in text. */
void kn_svgplot_fmt(const struct kn_svgplot *p, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Page position of a world point; false when it is not finite. Far-away
 * points are pulled in to +-1e6 px (the clip hides them). */
bool kn_svgplot_to_px(const struct kn_svgplot_map *m, double x, double y, double *px, double *py);
/* A marker of the given size [px] at a page position; angle [rad, page
 * frame, y down] turns the arrowhead. */
void kn_svgplot_shape_at(const struct kn_svgplot *p, FILE *f, enum kn_svgplot_shape shape,
                         const char *cls, const char *style, double px, double py, double size,
                         double angle);
/* The primitives, on any stream and map (the side panel has its own). */
void kn_svgplot_path_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                        const char *cls, const char *style, const double *x, const double *y,
                        size_t n);
void kn_svgplot_footprint_on(const struct kn_svgplot *p, FILE *f, const struct kn_svgplot_map *m,
                             const char *cls, const char *style, double x, double y, double yaw,
                             double length, double width);
/* Opens the side panel's stream; false when out of memory. */
bool kn_svgplot_side_open(struct kn_svgplot *p);
/* Width of s in px at the plot's font size (an estimate: sans-serif
 * averages about 0.56 em per character). */
double kn_svgplot_text_width(const char *s, double font_px);

#endif
