/* One sweep run (run.h). Bad input (the sweep file, the scenario, the
 * command line, an output directory holding another sweep) stops it with
 * exit status 2 before anything runs; a case whose run breaks is an error
 * that is printed with the command that reruns it alone, and the sweep
 * goes on. */
#include "run.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "casefile.h"
#include "jsonutil.h"
#include "outdir.h"
#include "pool.h"
#include "report.h"
#include "runnable.h"
#include "summary.h"

struct run {
    const struct kn_sweep_opts *o;
    struct kn_sweep sw;
    struct kn_sweep_scen sc;
    char out[4096];
    size_t *todo; /* case indices to run */
    size_t ntodo, ndone;
    int npass, nfail, nerr;
    double sim_total;
    int *cpus; /* slot k's CPU (kn_sweep_pool_cpus), NULL: none pinned */
};

static int bad(const char *msg)
{
    fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, msg);
    return 2;
}

/* OUT is new, empty, or holds this very sweep (the same hash). */
static int check_out(const char *out, const char *hex, char *err, size_t errlen)
{
    DIR *d = opendir(out);
    if (!d)
        return errno == ENOENT ? 0
                               : (snprintf(err, errlen, "%.900s: %s", out, strerror(errno)), -1);
    int empty = 1;
    const struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            empty = 0;
    closedir(d);
    if (empty)
        return 0;
    char p[4200];
    snprintf(p, sizeof p, "%s/sweep.json", out);
    cJSON *j = kn_sweep_read_json(p);
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "hash");
    int same = cJSON_IsString(h) && strcmp(h->valuestring, hex) == 0;
    cJSON_Delete(j);
    if (!same)
        snprintf(err, errlen,
                 "--out %.900s: the directory holds %s (not this sweep); give another --out", out,
                 cJSON_IsString(h) ? "another sweep" : "other files");
    return same ? 0 : -1;
}

static void print_rerun(const struct run *r, const struct kn_sweep_case *c)
{
    printf("%s:   rerun alone: kenaf-sim-run --sweep %s --case %s --", KN_SWEEP_ME, r->o->sweep,
           c->id);
    for (char **a = r->o->prog; *a; a++)
        printf(" %s", *a);
    printf("\n");
}

static pid_t start_case(void *ctx, size_t k, int slot)
{
    struct run *r = ctx;
    const struct kn_sweep_case *c = &r->sw.cases[r->todo[k]];
    char dir[4200], f[4300], err[512];
    snprintf(dir, sizeof dir, "%s/cases/%s", r->out, c->id);
    char *text = kn_sweep_case_scenario(&r->sc, &r->sw, c);
    snprintf(f, sizeof f, "%s/scenario.json", dir);
    if (!text || kn_sweep_mkdirs(dir, err, sizeof err) ||
        kn_sweep_write_file(f, text, err, sizeof err)) {
        free(text);
        return -1;
    }
    free(text);
    /* a stale outcome must not stand for this run's */
    const char *old[] = { "run.result", "trajectory.csv", "trajectory.svg", "controller.out" };
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++) {
        snprintf(f, sizeof f, "%s/%s", dir, old[i]);
        unlink(f);
    }
    char a[8][4300], seed[32], cpu[16];
    const char *argv[64 + 16];
    int n = 0;
    /* kenaf-sim-case runs the case as kenaf-sim-run --scenario would, with
     * no shell in between (tools/runcase) */
    argv[n++] = r->o->runcase;
    argv[n++] = "--engine";
    argv[n++] = r->o->engine;
    argv[n++] = "--simd";
    argv[n++] = r->o->simd;
    snprintf(a[0], sizeof a[0], "%s/scenario.json", dir);
    argv[n++] = "--scenario";
    argv[n++] = a[0];
    for (int p = 0; p < r->sw.nparams; p++)
        if (strcmp(r->sw.params[p].known->name, "seed") == 0) {
            snprintf(seed, sizeof seed, "%.0f", c->v[p]);
            argv[n++] = "--seed";
            argv[n++] = seed;
        }
    snprintf(a[1], sizeof a[1], "%s/run.result", dir);
    snprintf(a[2], sizeof a[2], "%s/trajectory.csv", dir);
    snprintf(a[3], sizeof a[3], "%s/trajectory.svg", dir);
    snprintf(a[4], sizeof a[4], "%s/controller.out", dir);
    snprintf(a[5], sizeof a[5], "%s/run.log", dir);
    argv[n++] = "--result";
    argv[n++] = a[1];
    argv[n++] = "--trajectory";
    argv[n++] = a[2];
    argv[n++] = "--trajectory";
    argv[n++] = a[3];
    argv[n++] = "--output";
    argv[n++] = a[4];
    if (r->o->idle) {
        argv[n++] = "--idle";
        argv[n++] = r->o->idle;
    }
    /* the case's processes on its slot's CPU: lockstep runs faster there
     * (docs/performance.md, "Sweeps"); the results do not depend on it */
    if (r->cpus) {
        snprintf(cpu, sizeof cpu, "%d", r->cpus[slot]);
        argv[n++] = "--cpu";
        argv[n++] = cpu;
    }
    argv[n++] = "--";
    for (char **p = r->o->prog; *p && n < 64 + 15; p++)
        argv[n++] = *p;
    argv[n] = NULL;
    return kn_sweep_spawn((char *const *)argv, a[5]);
}

/* The last line of a file, for a run that left no result. */
static void last_line(const char *path, char *out, size_t outlen)
{
    char e[64];
    char *b = kn_json_slurp(path, NULL, e, sizeof e);
    out[0] = '\0';
    if (!b)
        return;
    size_t n = strlen(b);
    while (n && b[n - 1] == '\n')
        b[--n] = '\0';
    const char *l = strrchr(b, '\n');
    snprintf(out, outlen, "%s", l ? l + 1 : b);
    free(b);
}

static void done_case(void *ctx, size_t k, int status, double wall_s)
{
    struct run *r = ctx;
    const struct kn_sweep_case *c = &r->sw.cases[r->todo[k]];
    char dir[4200], f[4300], err[512];
    snprintf(dir, sizeof dir, "%s/cases/%s", r->out, c->id);
    struct kn_sweep_result res;
    snprintf(f, sizeof f, "%s/run.result", dir);
    if (status == -1 || kn_sweep_read_run_result(f, &res)) {
        char last[600];
        snprintf(f, sizeof f, "%s/run.log", dir);
        last_line(f, last, sizeof last);
        memset(&res, 0, sizeof res);
        snprintf(res.status, sizeof res.status, "error");
        snprintf(res.mode, sizeof res.mode, "error");
        if (status == -1)
            snprintf(res.why, sizeof res.why, "kenaf-sim-case could not be started: %s",
                     strerror(errno));
        else
            snprintf(res.why, sizeof res.why, "kenaf-sim-case %s %d and left no result: %s",
                     WIFSIGNALED(status) ? "died of signal" : "exited with status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), last);
    }
    snprintf(f, sizeof f, "%s/trajectory.csv", dir);
    res.has_traj = kn_sweep_file_fnv(f, &res.traj_fnv) == 0;
    if (kn_sweep_write_result(r->out, &r->sw, c, &res, err, sizeof err))
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
    char timing[64];
    snprintf(timing, sizeof timing, "{\"wall_s\": %.3f}", wall_s);
    snprintf(f, sizeof f, "%s/timing.json", dir);
    if (kn_sweep_write_file(f, timing, err, sizeof err))
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
    r->ndone++;
    r->sim_total += res.sim_s;
    int is_err = strcmp(res.status, "error") == 0;
    r->npass += strcmp(res.status, "pass") == 0;
    r->nfail += strcmp(res.status, "fail") == 0;
    r->nerr += is_err;
    printf("%s: [%zu/%zu] %s %s", KN_SWEEP_ME, r->ndone, r->ntodo, c->id, res.status);
    for (int p = 0; p < r->sw.nparams; p++) {
        char v[64];
        kn_sweep_value_text(&r->sw, p, c->v[p], v, sizeof v);
        printf(" %s=%s", r->sw.params[p].known->name, v);
    }
    if (strcmp(res.status, "pass") != 0)
        printf(": %s: %s", res.mode, res.why);
    printf("\n");
    if (is_err)
        print_rerun(r, c);
    fflush(stdout);
}

/* Sweep file → cases, scenario, output directory. 0, or the exit status. */
static int prepare(struct run *r, uint64_t *hash)
{
    const struct kn_sweep_opts *o = r->o;
    char err[1200], msg[1400];
    size_t len;
    char *buf = kn_json_slurp(o->sweep, &len, err, sizeof err);
    if (!buf)
        return bad(err);
    int rc = kn_sweep_parse(buf, len, &r->sw, err, sizeof err);
    free(buf);
    if (!rc && o->sample > 0)
        kn_sweep_set_sample(&r->sw, o->sample);
    if (rc || kn_sweep_scen_load(o->sweep, &r->sw, &r->sc, err, sizeof err) ||
        kn_sweep_expand(&r->sw, err, sizeof err)) {
        snprintf(msg, sizeof msg, "%s: %s", o->sweep, err);
        return bad(msg);
    }
    *hash = kn_sweep_hash(&r->sw, r->sc.bytes, r->sc.len);
    r->todo = malloc((r->sw.ncases ? r->sw.ncases : 1) * sizeof *r->todo);
    if (!r->todo)
        return bad("out of memory");
    for (size_t i = 0; i < r->sw.ncases; i++)
        if (o->case_id ? strcmp(r->sw.cases[i].id, o->case_id) == 0
                       : kn_sweep_in_shard(i, o->shard_k, o->shard_n))
            r->todo[r->ntodo++] = i;
    if (o->case_id && r->ntodo == 0) {
        snprintf(msg, sizeof msg, "--case %s: no such case in sweep %s (%s)", o->case_id,
                 r->sw.name, o->sweep);
        return bad(msg);
    }
    if (o->out)
        snprintf(r->out, sizeof r->out, "%s", o->out);
    else
        snprintf(r->out, sizeof r->out, "sweep-out/%s", r->sw.name);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)*hash);
    if (check_out(r->out, hex, err, sizeof err))
        return bad(err);
    if (kn_runnable_check(o->prog[0], getenv("PATH"), err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
        return 3;
    }
    return 0;
}

int kn_sweep_run(const struct kn_sweep_opts *o)
{
    struct run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    uint64_t hash = 0;
    char err[1200];
    int rc = prepare(&r, &hash);
    if (rc)
        goto out;
    rc = 2;
    if (kn_sweep_mkdirs(r.out, err, sizeof err) ||
        kn_sweep_write_sweep_json(r.out, &r.sw, r.sc.name, hash, o->shard_k, o->shard_n, o->sweep,
                                  o->prog, err, sizeof err)) {
        bad(err);
        goto out;
    }
    printf("%s: sweep %s: %zu cases%s, %zu to run here, %d jobs, into %s\n", KN_SWEEP_ME, r.sw.name,
           r.sw.ncases, r.sw.has_sample ? " (sampled)" : "", r.ntodo, o->jobs, r.out);
    fflush(stdout);
    /* every case's program loads the simulation library first, as
     * kenaf-sim-run --lib sets it (kenaf-sim-run passes its default) */
    if (o->lib) {
        const char *old = getenv("LD_LIBRARY_PATH");
        char *v = malloc(strlen(o->lib) + (old ? strlen(old) : 0) + 2);
        if (!v) {
            rc = bad("out of memory");
            goto out;
        }
        sprintf(v, "%s%s%s", o->lib, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_LIBRARY_PATH", v, 1);
        free(v);
    }
    r.cpus = calloc((size_t)(o->jobs > 0 ? o->jobs : 1), sizeof *r.cpus);
    if (r.cpus && !kn_sweep_pool_cpus(o->jobs, r.cpus)) {
        free(r.cpus);
        r.cpus = NULL;
    }
    double t0 = kn_sweep_now();
    struct kn_sweep_pool_ops ops = { start_case, done_case };
    if (kn_sweep_pool_run(r.ntodo, o->jobs, &ops, &r)) {
        fprintf(stderr, "%s: waiting for the cases failed: %s\n", KN_SWEEP_ME, strerror(errno));
        rc = 3;
        goto out;
    }
    double wall = kn_sweep_now() - t0;
    rc = r.nerr ? 3 : 0;
    if (kn_sweep_write_results(r.out, err, sizeof err) ||
        kn_sweep_write_junit(r.out, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", KN_SWEEP_ME, err);
        rc = 3;
    }
    printf("%s: %zu cases: %d passed, %d failed, %d errors; %.1f s simulated in %.1f s "
           "(%.1f simulated s per wall s, %d jobs)\n",
           KN_SWEEP_ME, r.ntodo, r.npass, r.nfail, r.nerr, r.sim_total, wall,
           wall > 0 ? r.sim_total / wall : 0, o->jobs);
    /* the report needs the whole sweep: not for one shard or one case */
    if (!o->case_id && o->shard_n <= 1) {
        if (kn_report_write(r.out, err, sizeof err)) {
            fprintf(stderr, "%s: report: %s\n", KN_SWEEP_ME, err);
            rc = 3;
        } else
            kn_sweep_print_boundaries(r.out, stdout);
    }
out:
    free(r.cpus);
    free(r.todo);
    kn_sweep_scen_free(&r.sc);
    kn_sweep_free(&r.sw);
    return rc;
}
