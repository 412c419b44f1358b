/* Comparing two sweep output directories (kn_report_compare, report.h):
 * cases matched by id, the flips listed, and a regression when a
 * boundary moved to the easy side of OLD's 95 % interval or the pass
 * rate on the common cases fell below OLD's Wilson lower bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_data.h"

#define SAY "kenaf-sim-run: compare: "

/* Hardness of a value along the parameter's harder direction; no value
 * (a boundary below the easiest) is easier than every value. */
static double hardness(const struct kn_report_param *p, long v)
{
    return v < 0 ? -INFINITY : p->harder * p->values[v].num;
}

struct by_id {
    const char *id;
    size_t i;
};

static int cmp_by_id(const void *a, const void *b)
{
    return strcmp(((const struct by_id *)a)->id, ((const struct by_id *)b)->id);
}

static const char *status_name(enum kn_sweepstats_status st)
{
    return st == KN_SWEEPSTATS_PASS ? "pass" : st == KN_SWEEPSTATS_FAIL ? "fail" : "error";
}

static void case_line(FILE *out, const char *what, const struct kn_report_sweep *s, size_t i)
{
    const struct kn_report_case *c = &s->cases[i];
    fprintf(out, SAY "%s %s", what, c->id);
    for (size_t k = 0; k < s->nparams; k++) {
        char v[128];
        kn_report_value_text(&s->params[k], c->vidx[k], v, sizeof v);
        fprintf(out, " %s=%s", s->params[k].name, v);
    }
    if (c->status != KN_SWEEPSTATS_PASS)
        fprintf(out, " (%s: %s)", kn_sweepstats_mode_name(c->mode), c->why ? c->why : "");
    fputs("\n", out);
}

/* The cases both hold, flips printed; the judged-in-both counts for the
 * overall rate. Returns how many cases are common. */
static size_t match_cases(const struct kn_report_sweep *a, const struct kn_report_sweep *b,
                          const struct by_id *bi, FILE *out, unsigned *n, unsigned *pass_a,
                          unsigned *pass_b)
{
    size_t common = 0, flips = 0;
    *n = *pass_a = *pass_b = 0;
    for (size_t i = 0; i < a->ncases; i++) {
        struct by_id key = { a->cases[i].id, 0 };
        const struct by_id *hit = bsearch(&key, bi, b->ncases, sizeof *bi, cmp_by_id);
        if (!hit)
            continue;
        common++;
        enum kn_sweepstats_status sa = a->cases[i].status, sb = b->cases[hit->i].status;
        bool judged_a = sa == KN_SWEEPSTATS_PASS || sa == KN_SWEEPSTATS_FAIL;
        bool judged_b = sb == KN_SWEEPSTATS_PASS || sb == KN_SWEEPSTATS_FAIL;
        if (judged_a && judged_b) {
            (*n)++;
            *pass_a += sa == KN_SWEEPSTATS_PASS;
            *pass_b += sb == KN_SWEEPSTATS_PASS;
        }
        if (sa == sb || sa == KN_SWEEPSTATS_NOT_RUN || sb == KN_SWEEPSTATS_NOT_RUN)
            continue;
        char what[40];
        snprintf(what, sizeof what, "%s->%s", status_name(sa), status_name(sb));
        case_line(out, what, b, hit->i);
        flips++;
    }
    fprintf(out, SAY "%zu common cases, %zu changed status\n", common, flips);
    return common;
}

/* Each boundary of OLD against NEW's; true when one regressed. */
static bool compare_boundaries(const struct kn_report_sweep *a, const struct kn_report_stats *sa,
                               const struct kn_report_sweep *b, const struct kn_report_stats *sb,
                               FILE *out)
{
    bool worse = false;
    for (size_t k = 0; k < a->nparams; k++) {
        const struct kn_report_param *pa = &a->params[k];
        const struct kn_sweepstats_boundary *ba = &sa->bounds[k];
        if (!pa->harder || ba->lo < 0)
            continue;
        size_t kb = 0;
        while (kb < b->nparams && strcmp(b->params[kb].name, pa->name) != 0)
            kb++;
        if (kb == b->nparams || b->params[kb].harder != pa->harder) {
            fprintf(out, SAY "%s: no boundary in NEW to compare\n", pa->name);
            continue;
        }
        const struct kn_report_param *pb = &b->params[kb];
        const struct kn_sweepstats_boundary *bb = &sb->bounds[kb];
        char p_old[128], p_new[128], lo[128], hi[128];
        kn_report_value_text(pa, (size_t)ba->point, p_old, sizeof p_old);
        kn_report_value_text(pb, (size_t)bb->point, p_new, sizeof p_new);
        kn_report_value_text(pa, (size_t)ba->lo, lo, sizeof lo);
        kn_report_value_text(pa, (size_t)ba->hi, hi, sizeof hi);
        /* easier than OLD's interval, and than OLD's point itself (the
         * interval may start just past a point that is known too
         * weakly) */
        double bar = fmin(hardness(pa, ba->lo), hardness(pa, ba->point));
        double now = hardness(pb, bb->point);
        bool regressed = now < bar - 1e-9 * fmax(1, fabs(bar));
        worse |= regressed;
        fprintf(out, SAY "%s boundary: %s -> %s (OLD's 95 %% interval [%s, %s]): %s\n", pa->name,
                ba->point < 0 ? "none" : p_old, bb->point < 0 ? "none" : p_new, lo, hi,
                regressed                              ? "REGRESSION, easier than the interval"
                : now > hardness(pa, ba->point) + 1e-9 ? "harder"
                : now < hardness(pa, ba->point) - 1e-9 ? "easier, within the interval"
                                                       : "unchanged");
    }
    return worse;
}

static bool load(const char *dir, struct kn_report_sweep *s, struct kn_report_stats *st, FILE *out)
{
    char err[600];
    memset(st, 0, sizeof *st);
    if (kn_report_load_sweep(dir, s, err, sizeof err) != 0) {
        fprintf(out, SAY "%s\n", err);
        return false;
    }
    kn_report_load_results(dir, s);
    if (kn_report_analyse(s, st) != 0) {
        fprintf(out, SAY "%s: out of memory\n", dir);
        return false;
    }
    return true;
}

static int compare(const char *olddir, const char *newdir, FILE *out)
{
    struct kn_report_sweep a, b;
    struct kn_report_stats sa, sb;
    memset(&b, 0, sizeof b);
    memset(&sb, 0, sizeof sb);
    int rc = KN_REPORT_BAD;
    struct by_id *bi = NULL;
    if (!load(olddir, &a, &sa, out) || !load(newdir, &b, &sb, out))
        goto done;
    bi = malloc((b.ncases ? b.ncases : 1) * sizeof *bi);
    if (!bi) {
        fprintf(out, SAY "out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < b.ncases; i++)
        bi[i] = (struct by_id){ b.cases[i].id, i };
    qsort(bi, b.ncases, sizeof *bi, cmp_by_id);
    if (strcmp(a.hash, b.hash) != 0)
        fprintf(out,
                SAY "different sweeps (%s hash %s, %s hash %s): comparing the cases they "
                    "share\n",
                a.name, a.hash, b.name, b.hash);
    unsigned n, pass_a, pass_b;
    if (match_cases(&a, &b, bi, out, &n, &pass_a, &pass_b) == 0) {
        fprintf(out, SAY "no case in common: nothing to compare\n");
        goto done;
    }
    bool worse = compare_boundaries(&a, &sa, &b, &sb, out);
    if (n) {
        double lo, hi;
        kn_binom_wilson(pass_a, n, KN_BINOM_Z95, &lo, &hi);
        double ra = (double)pass_a / n, rb = (double)pass_b / n;
        bool regressed = rb < lo - 1e-12;
        worse |= regressed;
        fprintf(out,
                SAY "pass rate on the %u cases judged in both: %.3f -> %.3f (OLD's 95 %% "
                    "interval %.3f to %.3f)%s\n",
                n, ra, rb, lo, hi, regressed ? ": REGRESSION, below the interval" : "");
    }
    fprintf(out, SAY "%s\n", worse ? "regression" : "no regression");
    rc = worse ? KN_REPORT_REGRESSION : KN_REPORT_OK;
done:
    free(bi);
    kn_report_stats_free(&a, &sa);
    kn_report_stats_free(&b, &sb);
    kn_report_sweep_free(&a);
    kn_report_sweep_free(&b);
    return rc;
}

int kn_report_compare(const char *olddir, const char *newdir, FILE *out)
{
    struct kn_report_locale l;
    kn_report_locale_begin(&l);
    int rc = compare(olddir, newdir, out);
    kn_report_locale_end(&l);
    return rc;
}
