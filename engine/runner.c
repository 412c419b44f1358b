/* Command-line modes of kenaf-engine besides the server: one scenario file
 * (all variants or one, with CSV and SVG output) and the validation suite
 * (every scenario file plus the sanity checks, as a table or JSON). */
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "sanity.h"
#include "scenario.h"
#include "study.h"

#ifndef KN_CONFIG_DIR
#define KN_CONFIG_DIR "config"
#endif
#ifndef KN_INSTALL_CONFIG_DIR
#define KN_INSTALL_CONFIG_DIR "/usr/local/share/kenaf-sim"
#endif
#ifndef KN_BUILD_ROOT
#define KN_BUILD_ROOT "/nonexistent"
#endif

/* Invariant of every validation run (docs/engine.md): penetration < 10 mm. */
#define MAX_PENETRATION 0.010

/* The engine's own data folder (datadir.c), worked out once. */
const char *kn_run_config_dir(void)
{
    static char dir[4096];
    if (!dir[0])
        kn_datadir_of("/proc/self/exe", dir, sizeof dir);
    return dir;
}

struct row {
    char name[192];
    const char *expect;
    const char *got;
    int ok, dev;
    int pecka; /* one of Pecka et al.'s eight drives (its ICR run where both modes run) */
    double rtf, sim_s, cpu_s;
    char why[900];
    int has_study;
    struct kn_study study;
};

static void label(const struct kn_scenario *sc, char *out, size_t n)
{
    if (sc->param[0] && isfinite(sc->param_value))
        snprintf(out, n, "%s[%s=%g]", sc->name, sc->param, sc->param_value);
    else if (sc->nvariants > 1)
        snprintf(out, n, "%s[%d]", sc->name, sc->variant);
    else
        snprintf(out, n, "%s", sc->name);
}

static void suffixed(const char *path, int v, int nv, char *out, size_t n)
{
    if (nv <= 1) {
        snprintf(out, n, "%s", path);
        return;
    }
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash))
        snprintf(out, n, "%s-%d", path, v);
    else
        snprintf(out, n, "%.*s-%d%s", (int)(dot - path), path, v, dot);
}

/* Writes a run's CSV (svg 0) or SVG plot (svg 1) to path (suffixed per
 * variant); -1 with the path and the errno text in err. */
static int write_output(const char *path, int v, int many, int svg, const struct kn_scenario *sc,
                        const struct kn_result *res, char *err, size_t errlen)
{
    char fn[1024];
    suffixed(path, v, many, fn, sizeof fn);
    FILE *f = fopen(fn, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %.700s: %s", fn, strerror(errno));
        return -1;
    }
    int rc = svg ? kn_plot_write_svg(sc, res, f) : kn_result_write_csv(res, f);
    int e = rc ? errno : 0;
    if (fclose(f) != 0) {
        rc = -1;
        e = e ? e : errno;
    }
    if (rc) {
        snprintf(err, errlen, "writing %.700s: %s", fn, strerror(e ? e : EIO));
        return -1;
    }
    return 0;
}

/* Runs one variant into a row; writes CSV/SVG when asked. -1 on errors. */
static int run_variant(const char *path, int v, const struct kn_run_opts *o, struct row *row,
                       int *passed, char *err, size_t errlen)
{
    struct kn_scenario sc;
    if (kn_scenario_load(path, v, &sc, err, errlen))
        return -1;
    /* --robot: the same scenario with another robot, e.g. another geometry */
    if (o && o->robot && kn_robotfile_load(o->robot, &sc.rp, err, errlen)) {
        kn_scenario_free(&sc);
        return -1;
    }
    struct kn_result res;
    int keep = o && (o->csv || o->svg || o->study);
    if (sc.ctrl == KN_CTRL_EXTERNAL) {
        snprintf(err, errlen,
                 "%s: its controller is a program: run it with kenaf-sim-run "
                 "--scenario %s -- PROGRAM",
                 path, path);
        kn_scenario_free(&sc);
        return -1;
    }
    if (kn_scenario_run(&sc, keep, &res)) {
        snprintf(err, errlen, "%s: could not build the world", path);
        kn_scenario_free(&sc);
        return -1;
    }
    memset(row, 0, sizeof *row);
    label(&sc, row->name, sizeof row->name);
    row->expect = kn_expect_name(sc.expect);
    row->got = res.passed ? "pass" : "fail";
    /* a disagreement with the reference fails the run; the scenario's
     * "deviation" text only says what the study of it found */
    row->dev = !res.matches && sc.deviation[0];
    row->ok = res.matches && res.finite && res.max_depth < MAX_PENETRATION;
    row->pecka =
        strcmp(sc.group, "pecka") == 0 && !(sc.nvariants > 1 && sc.pp.fdir_mode == KN_FDIR_AXLE);
    row->rtf = res.rtf;
    row->sim_s = res.sim_s;
    row->cpu_s = res.cpu_s;
    snprintf(
        row->why, sizeof row->why, "%s; max depth %.1f mm%s%s%.200s", res.why, 1000 * res.max_depth,
        res.max_depth >= MAX_PENETRATION ? " (>= 10 mm: invariant broken)" : "",
        row->dev ? "; disagrees with the reference, studied: " : "", row->dev ? sc.deviation : "");
    *passed = res.passed;
    int rc = 0;
    if (o && o->study && !res.matches && res.finite) {
        rc = kn_study_make(&sc, &res, o->robot, &row->study, err, errlen);
        row->has_study = rc == 0;
    }
    int many = o && o->variant < 0 ? sc.nvariants : 1;
    if (o && o->csv && rc == 0)
        rc = write_output(o->csv, v, many, 0, &sc, &res, err, errlen);
    if (o && o->svg && rc == 0)
        rc = write_output(o->svg, v, many, 1, &sc, &res, err, errlen);
    kn_result_free(&res);
    kn_scenario_free(&sc);
    return rc;
}

static void print_row(FILE *out, const struct row *r)
{
    fprintf(out, "%-40s %-6s %-4s %-3s %7.1f  %s\n", r->name, r->expect, r->got,
            r->ok ? "ok" : "BAD", r->rtf, r->why);
    if (r->has_study)
        kn_study_print(out, &r->study);
}

static void print_head(FILE *out)
{
    fprintf(out, "%-40s %-6s %-4s %-3s %7s  %s\n", "scenario", "expect", "got", "", "RTF",
            "detail");
}

/* Runs the variants of one file; appends rows. Returns mismatches or -1. */
static int run_file(const char *path, const struct kn_run_opts *o, struct row **rows, int *nrows,
                    int *cap, FILE *out, int print)
{
    char err[768];
    int n = kn_scenario_count(path, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return -1;
    }
    struct kn_scenario head;
    if (kn_scenario_load(path, 0, &head, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return -1;
    }
    int monotone = head.monotone;
    kn_scenario_free(&head);
    int bad = 0, seen_fail = 0;
    for (int v = 0; v < n; v++) {
        if (o && o->variant >= 0 && v != o->variant)
            continue;
        if (*nrows == *cap) {
            int nc = *cap ? 2 * *cap : 32;
            struct row *nr = realloc(*rows, (size_t)nc * sizeof *nr);
            if (!nr)
                return -1;
            *rows = nr;
            *cap = nc;
        }
        struct row *r = &(*rows)[*nrows];
        int passed = 0;
        if (run_variant(path, v, o, r, &passed, err, sizeof err)) {
            fprintf(stderr, "kenaf-engine: %s\n", err);
            return -1;
        }
        if (monotone && passed && seen_fail) {
            r->ok = 0;
            strncat(r->why, "; NOT MONOTONE: passes after a lower variant failed",
                    sizeof r->why - strlen(r->why) - 1);
        }
        seen_fail |= !passed;
        bad += !r->ok;
        (*nrows)++;
        if (print)
            print_row(out, r);
        fflush(out);
    }
    return bad;
}

int kn_run_scenario_file(const char *path, const struct kn_run_opts *o, FILE *out)
{
    struct row *rows = NULL;
    int n = 0, cap = 0;
    if (!o->quiet)
        print_head(out);
    int bad = run_file(path, o, &rows, &n, &cap, out, 1);
    free(rows);
    if (bad < 0)
        return 2;
    return bad ? 1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(out, "\\u%04x", *s);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

int kn_run_validation(const char *dir, const char *robot_path, int robot_given, int json, FILE *out)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "kenaf-engine: cannot open scenario directory %s\n", dir);
        return 2;
    }
    char **names = NULL;
    int nn = 0, ncap = 0, rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".json") != 0 || e->d_name[0] == '.')
            continue;
        if (nn == ncap) {
            ncap = ncap ? 2 * ncap : 32;
            char **nb = realloc(names, (size_t)ncap * sizeof *nb);
            if (!nb) {
                rc = 2;
                break;
            }
            names = nb;
        }
        names[nn] = malloc(strlen(dir) + l + 2);
        if (!names[nn]) {
            rc = 2;
            break;
        }
        sprintf(names[nn], "%s/%s", dir, e->d_name);
        nn++;
    }
    closedir(d);
    if (names)
        qsort(names, (size_t)nn, sizeof *names, cmp_str);
    struct row *rows = NULL;
    int nrows = 0, cap = 0, bad = 0;
    struct kn_run_opts o = { NULL, NULL, -1, 1, robot_given ? robot_path : NULL, 1 };
    if (!json && rc == 0)
        print_head(out);
    for (int i = 0; i < nn && rc == 0; i++) {
        int b = run_file(names[i], &o, &rows, &nrows, &cap, out, !json);
        if (b < 0)
            rc = 2;
        else
            bad += b;
    }
    /* sanity checks */
    struct kn_robot_params rp;
    char err[768];
    if (rc == 0 && kn_robotfile_load(robot_path, &rp, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        rc = 2;
    }
    for (int i = 0; i < kn_sanity_count && rc == 0; i++) {
        if (nrows == cap) {
            int nc = cap ? 2 * cap : 32;
            struct row *nr = realloc(rows, (size_t)nc * sizeof *nr);
            if (!nr) {
                rc = 2;
                break;
            }
            rows = nr;
            cap = nc;
        }
        struct kn_sanity_result sr;
        struct row *r = &rows[nrows++];
        memset(r, 0, sizeof *r);
        int sr_rc = kn_sanity_run(kn_sanity_checks[i].name, &rp, &sr);
        snprintf(r->name, sizeof r->name, "sanity-%s", kn_sanity_checks[i].name);
        r->expect = "pass";
        r->got = sr_rc == 0 && sr.passed ? "pass" : "fail";
        r->ok = sr_rc == 0 && sr.passed;
        r->sim_s = sr.sim_s;
        r->cpu_s = sr.cpu_s;
        r->rtf = sr.cpu_s > 0 ? sr.sim_s / sr.cpu_s : 0;
        snprintf(r->why, sizeof r->why, "%s", sr.why);
        bad += !r->ok;
        if (!json)
            print_row(out, r);
        fflush(out);
    }
    double sim = 0, cpu = 0, psim = 0, pcpu = 0;
    for (int i = 0; i < nrows; i++) {
        sim += rows[i].sim_s;
        cpu += rows[i].cpu_s;
        psim += rows[i].pecka ? rows[i].sim_s : 0;
        pcpu += rows[i].pecka ? rows[i].cpu_s : 0;
    }
    if (rc == 0 && json) {
        fprintf(out, "{\"rows\": [\n");
        for (int i = 0; i < nrows; i++) {
            const struct row *r = &rows[i];
            fprintf(out, "  {\"scenario\": ");
            json_str(out, r->name);
            fprintf(
                out,
                ", \"expected\": \"%s\", \"got\": \"%s\", \"ok\": %s, \"deviation\": %s, \"rtf\": %.1f, "
                "\"sim_s\": %.2f, \"cpu_s\": %.3f, \"detail\": ",
                r->expect, r->got, r->ok ? "true" : "false", r->dev ? "true" : "false", r->rtf,
                r->sim_s, r->cpu_s);
            json_str(out, r->why);
            if (r->has_study)
                kn_study_json(out, &r->study);
            fprintf(out, "}%s\n", i + 1 < nrows ? "," : "");
        }
        fprintf(out,
                "], \"mismatches\": %d, \"sim_s\": %.2f, \"cpu_s\": %.3f, \"rtf\": %.1f, "
                "\"pecka_sim_s\": %.2f, \"pecka_cpu_s\": %.3f}\n",
                bad, sim, cpu, cpu > 0 ? sim / cpu : 0, psim, pcpu);
    } else if (rc == 0) {
        fprintf(out, "\n%d runs, %d mismatches; %.1f s simulated in %.2f s CPU: RTF %.1f overall\n",
                nrows, bad, sim, cpu, cpu > 0 ? sim / cpu : 0);
        /* Pecka et al.'s Gazebo/ODE model ran their eight drives, 110 s
         * simulated, in 38.9 s of CPU */
        fprintf(out,
                "Pecka's eight drives: %.1f s simulated in %.2f s CPU (RTF %.1f; their "
                "Gazebo/ODE model: 110 s in 38.9 s, RTF 2.8)\n",
                psim, pcpu, pcpu > 0 ? psim / pcpu : 0);
    }
    for (int i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    for (int i = 0; i < nrows; i++)
        if (rows[i].has_study)
            kn_study_free(&rows[i].study);
    free(rows);
    if (rc)
        return rc;
    return bad ? 1 : 0;
}

int kn_run_check_trial(const char *path, FILE *out)
{
    /* a scenario holds a terrain of up to 1 024 parts: not on the stack */
    struct kn_scenario *sc = malloc(sizeof *sc);
    char err[768];
    if (!sc) {
        fprintf(stderr, "kenaf-engine: out of memory\n");
        return 2;
    }
    if (kn_scenario_load(path, 0, sc, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        free(sc);
        return 2;
    }
    int rc = 0;
    const struct kn_trial_def *d = &sc->crit.trial;
    if (sc->crit.type != KN_CRIT_TRIAL) {
        fprintf(stderr,
                "kenaf-engine: %s: its criterion is not a trial (\"criterion\": {\"type\": "
                "\"trial\", \"course\": ..., \"repetitions\": N}; docs/apparatus.md)\n",
                path);
        rc = 2;
    } else {
        fprintf(out, "%s: %s on %s, %d repetitions, %d without a fault to pass, %g s\n", sc->name,
                d->course == KN_TRIAL_FIGURE8 ? "figure8" : "traverse",
                sc->terrain.name[0] ? sc->terrain.name : kn_terrain_type_name(sc->terrain.type),
                d->reps, d->min_successes, sc->duration);
    }
    kn_scenario_free(sc);
    free(sc);
    return rc;
}
