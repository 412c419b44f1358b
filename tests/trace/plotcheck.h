/* What makes a trajectory plot readable, checked on its parsed SVG (the
 * classes common/svgplot puts on the elements say what each one is):
 * numbers that are numbers, axes with evenly spaced round ticks and
 * units, a grid, one scale for both axes, the path filling the plot,
 * distinct start and end markers (end on top), heading marks in their own
 * colour, regular time labels, the robot's footprint at start and end,
 * legend, title and caption. Used by the writer's unit tests and, on the
 * demo's real output, by svgcheck. */
#ifndef KN_TEST_PLOTCHECK_H
#define KN_TEST_PLOTCHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "xmlread.h"

struct pc_want {
    double length, width; /* the footprint [m]; 0: none expected */
    double fill;          /* the path spans at least this share of the plot ... */
    bool both_ways;       /* ... across and up (else across or up) */
};

/* NULL when every check holds, else what failed (a static buffer). */
const char *pc_check_plot(const struct x_doc *d, const struct pc_want *want);
/* Only that every coordinate attribute is a finite number and the root
 * is an <svg> with a size. NULL or what failed. */
const char *pc_check_numbers(const struct x_doc *d);

#endif
