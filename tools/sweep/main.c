/* kenaf-sweep: the program behind kenaf-sim-run --sweep, --merge and
 * --compare (docs/scenario-runs.md, "Sweeps"). kenaf-sim-run execs it with
 * the paths of kenaf-sim-case, kenaf-engine and kenaf-simd and its default
 * library directory, so each case runs through the same kenaf-sim-case a
 * kenaf-sim-run --scenario of it runs, without a shell per case.
 *
 *   kenaf-sweep --runcase PATH --engine PATH --simd PATH
 *               --sweep FILE [--jobs N] [--shard K/N]
 *               [--case ID] [--sample N] [--out DIR] [--idle S] [--lib DIR]
 *               -- PROGRAM [ARGS...]
 *   kenaf-sweep --merge DIR [DIR...] --out DIR
 *   kenaf-sweep --compare OLD NEW */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outdir.h"
#include "report.h"
#include "run.h"
#include "sweep.h"

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, why);
    fprintf(stderr,
            "usage: kenaf-sim-run --sweep FILE [--jobs N] [--shard K/N] [--case ID] [--sample N]\n"
            "                     [--out DIR] [--idle S] [--lib DIR] -- PROGRAM [ARGS...]\n"
            "       kenaf-sim-run --merge DIR [DIR...] --out DIR\n"
            "       kenaf-sim-run --compare OLD NEW\n");
    return 2;
}

/* A positive integer option value. */
static int positive(const char *opt, const char *s, long max, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 1 || v > max) {
        fprintf(stderr, "%s: %s needs an integer 1..%ld, not %s\n", KN_SWEEP_ME, opt, max, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int merge(int argc, char **argv, int i)
{
    const char *out = NULL;
    const char **dirs = calloc((size_t)argc, sizeof *dirs);
    int n = 0;
    if (!dirs)
        return 2;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (argv[i][0] == '-') {
            free(dirs);
            return usage("--merge takes directories and --out DIR");
        } else
            dirs[n++] = argv[i];
    }
    if (!out || n == 0) {
        free(dirs);
        return usage("--merge needs at least one directory and --out DIR");
    }
    int rc = kn_report_merge((const char *const *)dirs, n, out, stdout);
    free(dirs);
    char err[512];
    /* the JUnit file of the whole sweep, as a run of it writes one */
    if (rc != 2 && kn_sweep_write_junit(out, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
        return 3;
    }
    return rc;
}

static int option(struct kn_sweep_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    static const char *const with_value[] = { "--runcase", "--engine", "--simd", "--sweep",
                                              "--jobs",    "--shard",  "--case", "--sample",
                                              "--out",     "--idle",   "--lib",  NULL };
    int known = 0;
    for (const char *const *w = with_value; *w; w++)
        known |= strcmp(a, *w) == 0;
    if (!known) {
        fprintf(stderr, "%s: unknown option %s with --sweep\n", KN_SWEEP_ME, a);
        return -1;
    }
    if (!v) {
        fprintf(stderr, "%s: %s needs a value\n", KN_SWEEP_ME, a);
        return -1;
    }
    (*i)++;
    long n;
    char err[256];
    if (strcmp(a, "--runcase") == 0)
        o->runcase = v;
    else if (strcmp(a, "--engine") == 0)
        o->engine = v;
    else if (strcmp(a, "--simd") == 0)
        o->simd = v;
    else if (strcmp(a, "--sweep") == 0)
        o->sweep = v;
    else if (strcmp(a, "--out") == 0)
        o->out = v;
    else if (strcmp(a, "--case") == 0)
        o->case_id = v;
    else if (strcmp(a, "--idle") == 0) {
        /* checked here, not once per case by each run */
        char *end;
        double s = strtod(v, &end);
        if (!*v || *end || !(s >= 0.5 && s <= 3600)) {
            fprintf(stderr, "%s: --idle needs seconds 0.5..3600, not %s\n", KN_SWEEP_ME, v);
            return -1;
        }
        o->idle = v;
    } else if (strcmp(a, "--lib") == 0) {
        char lib[4200];
        snprintf(lib, sizeof lib, "%s/libkenaf.so.1", v);
        if (access(lib, R_OK) != 0) {
            fprintf(stderr, "%s: no libkenaf.so.1 in %s (--lib DIR)\n", KN_SWEEP_ME, v);
            return -1;
        }
        o->lib = v;
    } else if (strcmp(a, "--jobs") == 0) {
        if (positive(a, v, 1024, &n))
            return -1;
        o->jobs = (int)n;
    } else if (strcmp(a, "--sample") == 0) {
        if (positive(a, v, KN_SWEEP_MAX_CASES_LIMIT, &o->sample))
            return -1;
    } else if (kn_sweep_shard_parse(v, &o->shard_k, &o->shard_n, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--merge") == 0)
            return merge(argc, argv, i + 1);
        if (strcmp(argv[i], "--compare") == 0) {
            if (argc - i != 3)
                return usage("--compare takes two output directories: OLD NEW");
            return kn_report_compare(argv[i + 1], argv[i + 2], stdout);
        }
    }
    struct kn_sweep_opts o;
    memset(&o, 0, sizeof o);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    o.jobs = cpus > 0 ? (int)cpus : 1;
    int i = 1;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (option(&o, argc, argv, &i))
            return usage(NULL);
    if (!o.sweep)
        return usage("--sweep FILE is needed");
    if (!o.runcase || !o.engine || !o.simd)
        return usage("--runcase, --engine and --simd are needed (kenaf-sim-run gives them)");
    if (o.case_id && o.shard_n)
        return usage("--case and --shard exclude each other");
    if (i + 1 >= argc)
        return usage("no program: --sweep FILE [options] -- PROGRAM [ARGS...]");
    o.prog = argv + i + 1;
    return kn_sweep_run(&o);
}
