/* The closing lines of a sweep: its boundaries as the report computed
 * them (OUT/report.json). */
#ifndef KN_SWEEP_SUMMARY_H
#define KN_SWEEP_SUMMARY_H

#include <stdio.h>

/* One line per boundary of OUT/report.json; nothing when it has none. */
void kn_sweep_print_boundaries(const char *out, FILE *f);

#endif
