/* A sweep's statistics, sans-I/O (no files, no JSON): with the Wilson
 * score interval of a pass rate (common/binom.h), the table of one parameter's values (each
 * marginal over the other parameters), the boundaries of a parameter
 * with a harder direction, and the failure modes counted. The report
 * (report.h) feeds it the cases it read and writes what it returns;
 * docs/scenario-runs.md says what each figure means and why. */
#ifndef KN_SWEEPSTATS_H
#define KN_SWEEPSTATS_H

#include <stdbool.h>
#include <stddef.h>

#include "binom.h"

/* The target pass rate when the sweep names none. */
#define KN_SWEEPSTATS_TARGET 0.95

/* What became of a case. A case with an error was not judged (the run
 * itself broke), one not run has no result: neither counts in a rate. */
enum kn_sweepstats_status {
    KN_SWEEPSTATS_NOT_RUN = 0,
    KN_SWEEPSTATS_PASS,
    KN_SWEEPSTATS_FAIL,
    KN_SWEEPSTATS_ERROR,
};

/* The verdict's failure mode (result.json's "mode"), in the report's
 * order. */
enum kn_sweepstats_mode {
    KN_SWEEPSTATS_MODE_NONE = 0, /* passed */
    KN_SWEEPSTATS_MODE_TIP_OVER,
    KN_SWEEPSTATS_MODE_STALL,
    KN_SWEEPSTATS_MODE_TIME_OUT,
    KN_SWEEPSTATS_MODE_LIMIT,
    KN_SWEEPSTATS_MODE_CRASH,
    KN_SWEEPSTATS_MODE_CRITERION,
    KN_SWEEPSTATS_MODE_ERROR,
    KN_SWEEPSTATS_NMODES
};

/* The mode's name as result.json writes it ("tip-over"). */
const char *kn_sweepstats_mode_name(enum kn_sweepstats_mode m);
/* The mode of a name, or -1 when it is none. */
int kn_sweepstats_mode_parse(const char *name);

/* One value of one parameter: the cases that had it. */
struct kn_sweepstats_cell {
    unsigned n;      /* judged: pass + fail */
    unsigned pass;   /* passed */
    unsigned errors; /* not judged (status error) */
    double rate;     /* pass / n; NaN when n = 0 */
    double lo, hi;   /* Wilson 95 % interval of the rate */
    unsigned modes[KN_SWEEPSTATS_NMODES];
};

/* One case as the statistics see it. */
struct kn_sweepstats_case {
    enum kn_sweepstats_status status;
    enum kn_sweepstats_mode mode;
};

/* Fills cells[0..nvalues) for one parameter: vidx[i] is case i's index
 * among the parameter's values (< nvalues; others are skipped).
 * Marginal: every case with the value counts, whatever its other
 * parameters. */
void kn_sweepstats_table(const struct kn_sweepstats_case *cases, const size_t *vidx, size_t ncases,
                         struct kn_sweepstats_cell *cells, size_t nvalues);

/* Counts modes over all cases (not run ones aside) into modes[]. */
void kn_sweepstats_modes(const struct kn_sweepstats_case *cases, size_t ncases,
                         unsigned modes[KN_SWEEPSTATS_NMODES]);

/* A parameter's boundaries, as indices into its values (sorted
 * ascending), -1 for none (null). Values with no judged case carry no
 * evidence and are passed over. */
struct kn_sweepstats_boundary {
    long point;     /* hardest v with rate >= T at every value up to v */
    long confident; /* hardest v with Wilson lo >= T at every value up to v */
    long lo, hi;    /* the interval: [first value whose lo < T (or the
                       hardest), first value past point whose hi < T (or
                       the hardest)]; -1 when no value was judged */
};

/* The boundaries of cells[0..n) at target rate target. harder_lower:
 * the task gets harder as the value falls, so the scan runs from the
 * highest value down; else from the lowest up. */
void kn_sweepstats_boundary(const struct kn_sweepstats_cell *cells, size_t n, bool harder_lower,
                            double target, struct kn_sweepstats_boundary *b);

#endif
