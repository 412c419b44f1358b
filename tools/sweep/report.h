/* A sweep's report, merge and compare: what kenaf-sweep calls once the
 * cases have run. Reads OUT/sweep.json and OUT/cases/<id>/result.json,
 * computes the statistics (stats.h) and writes OUT/report.json and
 * OUT/report.html; joins shard directories into one; compares two
 * output directories. The file formats are in docs/scenario-runs.md. */
#ifndef KN_REPORT_H
#define KN_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* Exit statuses of merge and compare (kenaf-sim-run's). */
#define KN_REPORT_OK 0
#define KN_REPORT_REGRESSION 1 /* compare: NEW is worse */
#define KN_REPORT_BAD 2        /* bad input: not one sweep, unreadable */
#define KN_REPORT_ERRORS 3     /* merge: some case could not be judged */

/* Reads outdir/sweep.json and every outdir/cases/<id>/result.json the
 * sweep lists (missing: the case counts as not run; unreadable or
 * malformed: as an error, the reason as its "why"), computes the
 * statistics and writes outdir/report.json and outdir/report.html.
 * 0, or -1 with the reason in err. */
int kn_report_write(const char *outdir, char *err, size_t errlen);

/* Joins the shard directories dirs[0..ndirs) into outdir: checks they
 * hold one sweep (the same hash) with every case exactly once (naming
 * the cases missing or held twice), copies the case directories,
 * writes sweep.json with "shard": null, results.json and the report.
 * junit.xml is kenaf-sweep's to write afterwards. Prints what it did
 * and why it refused to msg. Returns KN_REPORT_OK, KN_REPORT_ERRORS
 * (some case errored) or KN_REPORT_BAD. */
int kn_report_merge(const char *const *dirs, int ndirs, const char *outdir, FILE *msg);

/* Compares two output directories case by case (matched by id): prints
 * the cases that flipped, each boundary's move and the overall rates to
 * out. KN_REPORT_REGRESSION when a boundary moved to the easier side of
 * OLD's confidence interval or NEW's pass rate on the common cases fell
 * below OLD's Wilson lower bound, KN_REPORT_BAD when a directory cannot
 * be read, else KN_REPORT_OK. */
int kn_report_compare(const char *olddir, const char *newdir, FILE *out);

#endif
