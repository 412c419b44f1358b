/* The one SVG plot writer, shared by kenaf-trace (a recorded trajectory),
 * kenaf-engine (a scenario run, top or side view) and a sweep's report
 * (pass rate against a parameter). A plot is a frame (title, axes with
 * ticks at a step chosen from the data, grid, one scale for both axes or,
 * for a chart, one each, legend, caption) around what the caller draws
 * in world coordinates; kn_svgplot_track draws a trajectory into it (path,
 * heading and time marks, start and end markers, the robot's footprint).
 *
 * Everything is buffered until kn_svgplot_end, which writes the document
 * to the caller's FILE (its size depends on the legend and the caption).
 * Non-finite numbers are skipped, never written; all text is XML-escaped;
 * numbers are written with a '.' whatever the locale. Classes on the
 * elements (axis, tick, grid, path, start, end, footprint, heading, time,
 * legend, title, caption) name what each one shows. */
#ifndef KN_SVGPLOT_H
#define KN_SVGPLOT_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* World bounds of what is to be shown; non-finite points do not count. */
struct kn_svgplot_box {
    double x0, x1, y0, y1;
    size_t n; /* points added */
};

void kn_svgplot_box_init(struct kn_svgplot_box *b);
void kn_svgplot_box_add(struct kn_svgplot_box *b, double x, double y);

struct kn_svgplot_frame {
    const char *title;   /* above the plot (NULL: none) */
    const char *caption; /* below it, wrapped to the width (NULL: none) */
    const char *x_label; /* axis titles with units, e.g. "x [m]" */
    const char *y_label;
    double max_w, max_h; /* the plot area is at most this big [px] */
    double min_span;     /* the view is at least this wide and high [m] */
    double margin;       /* room around the data, fraction of its span */
};

/* Legend symbols. */
enum kn_svgplot_shape {
    KN_SVGPLOT_LINE,   /* a line in the entry's style */
    KN_SVGPLOT_RING,   /* circle outline */
    KN_SVGPLOT_SQUARE, /* filled square */
    KN_SVGPLOT_ARROW,  /* filled arrowhead pointing right */
    KN_SVGPLOT_RECT,   /* outlined rectangle (an area, a footprint) */
    KN_SVGPLOT_DOT,    /* filled circle */
};

/* Where world coordinates land on the page. */
struct kn_svgplot_map {
    double x0, y1;    /* world point at the top left corner */
    double scale;     /* px per metre, both axes */
    double left, top; /* page position of that corner [px] */
    double yscale;    /* px per unit on y when the axes differ (0: scale) */
};

#define KN_SVGPLOT_MAX_LEGEND 12

/* The plot being built: set up by kn_svgplot_begin, read-only for
 * callers (x0..y1 are the shown world bounds). */
struct kn_svgplot {
    double x0, x1, y0, y1;
    double w, h;  /* plot area [px] */
    double step;  /* tick and grid step [m] */
    double ystep; /* on y when the axes differ (0: step) */
    struct kn_svgplot_map map;
    struct kn_svgplot_frame frame;
    FILE *data; /* clipped to the plot area */
    FILE *over; /* on top, unclipped: markers, labels */
    FILE *side; /* the to-scale panel right of the plot */
    char *data_buf, *over_buf, *side_buf;
    size_t data_len, over_len, side_len;
    double side_w;      /* its width [px]; 0: none */
    locale_t c_numeric; /* '.' decimals whatever the caller's locale */
    int nlegend;
    struct {
        enum kn_svgplot_shape shape;
        char style[160];
        char label[96];
    } legend[KN_SVGPLOT_MAX_LEGEND];
    bool failed; /* out of memory on the way */
    bool chart;  /* kn_svgplot_begin_chart: each axis its own scale */
    char clip_id[40];
};

/* Starts a plot that shows data (with the frame's margin and minimum
 * span). 0, or -1 when out of memory (nothing to end then). */
int kn_svgplot_begin(struct kn_svgplot *p, const struct kn_svgplot_box *data,
                     const struct kn_svgplot_frame *fr);
/* Starts a chart rather than a map: each axis its own scale and ticks,
 * the plot area max_w x max_h (min_span applies to x alone). clip_id
 * names the plot area's clip path (letters, digits, '-'), unique per
 * plot when several share one HTML page. 0 or -1 as kn_svgplot_begin. */
int kn_svgplot_begin_chart(struct kn_svgplot *p, const struct kn_svgplot_box *data,
                           const struct kn_svgplot_frame *fr, const char *clip_id);
/* Writes the document to f and frees the plot. 0, or -1 on a write error
 * (or when memory ran out while drawing). */
int kn_svgplot_end(struct kn_svgplot *p, FILE *f);

/* A legend entry (shown once per label). style: SVG presentation
 * attributes, e.g. "stroke='#1f77b4' stroke-width='2'". */
void kn_svgplot_legend(struct kn_svgplot *p, enum kn_svgplot_shape shape, const char *style,
                       const char *label);

/* Drawing in world coordinates [m]. cls names what the element shows;
 * style as for the legend. A path breaks at non-finite points. */
void kn_svgplot_path(struct kn_svgplot *p, const char *cls, const char *style, const double *x,
                     const double *y, size_t n);
void kn_svgplot_polygon(struct kn_svgplot *p, const char *cls, const char *style, const double *x,
                        const double *y, size_t n);
void kn_svgplot_line(struct kn_svgplot *p, const char *cls, const char *style, double x0, double y0,
                     double x1, double y1);
/* A marker symbol of size [px] at a world point (the size stays in
 * pixels whatever the scales: a chart's data point). */
void kn_svgplot_marker(struct kn_svgplot *p, enum kn_svgplot_shape shape, const char *cls,
                       const char *style, double x, double y, double size);
/* s as XML character data to f (escaped; invalid UTF-8 and control
 * characters become '?'): also right for HTML text and quoted attribute
 * values. */
void kn_svgplot_text(FILE *f, const char *s);
/* r in metres. */
void kn_svgplot_circle(struct kn_svgplot *p, const char *cls, const char *style, double x, double y,
                       double r);
/* The robot's footprint: a length x width rectangle centred on (x, y),
 * turned by yaw [rad], with a line from its centre to its front edge. */
void kn_svgplot_footprint(struct kn_svgplot *p, const char *cls, const char *style, double x,
                          double y, double yaw, double length, double width);

/* A trajectory: n samples of robot-clock time [s], position [m] and yaw
 * [rad] (yaw NULL: dots instead of heading arrowheads). */
struct kn_svgplot_track {
    size_t n;
    const double *t, *x, *y, *yaw;
    const char *label; /* the path's legend entry (NULL: "path") */
};

/* The robot's footprint, body and tracks seen from above [m]; 0 for
 * none. */
struct kn_svgplot_robot {
    double length, width;
};

/* Adds the track's points to a box. */
void kn_svgplot_track_box(const struct kn_svgplot_track *tr, struct kn_svgplot_box *b);
/* Draws the track: the path; at regular robot-clock intervals a heading
 * arrowhead and a time label (seconds since the first sample); start and
 * end markers (end on top); the footprint at start and end, in the plot
 * when it fits there, else in a panel beside it drawn to its own scale. */
void kn_svgplot_track(struct kn_svgplot *p, const struct kn_svgplot_track *tr,
                      const struct kn_svgplot_robot *robot);

/* The whole top view of a track (x, y in metres) as one document. 0 or
 * -1 as kn_svgplot_end. */
int kn_svgplot_trajectory(FILE *f, const struct kn_svgplot_track *tr,
                          const struct kn_svgplot_robot *robot, const char *title,
                          const char *caption);

/* A step of 1, 2 or 5 times a power of ten, at least raw (> 0). */
double kn_svgplot_nice_step(double raw);

#endif
