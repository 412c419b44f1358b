/* Joining shard directories into one (kn_report_merge, report.h): the
 * shards must hold one sweep (the same hash) and every case exactly
 * once; the case directories are copied, sweep.json is written with
 * "shard": null, results.json lists every case, and the report follows. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "report_data.h"

/* Names printed per kind of problem before "and N more". */
#define MAX_NAMED 20

#define SAY "kenaf-sim-run: merge: "

static bool has_result(const char *dir, const char *id)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, id);
    return access(path, F_OK) == 0;
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[65536];
    int rc = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = n < 0 ? -1 : 0;
            break;
        }
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                rc = -1;
                break;
            }
            off += w;
        }
        if (rc != 0)
            break;
    }
    int e = errno;
    close(in);
    if (close(out) != 0 && rc == 0)
        return -1;
    errno = e;
    return rc;
}

/* Copies directory from into to (created), files and directories below
 * it; anything else (a link, a socket) is left out. */
static int copy_dir(const char *from, const char *to, int depth)
{
    if (depth > 8) {
        errno = ELOOP;
        return -1;
    }
    if (mkdir(to, 0755) != 0 && errno != EEXIST)
        return -1;
    DIR *d = opendir(from);
    if (!d)
        return -1;
    int rc = 0;
    const struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char a[PATH_MAX], b[PATH_MAX];
        if ((size_t)snprintf(a, sizeof a, "%s/%s", from, e->d_name) >= sizeof a ||
            (size_t)snprintf(b, sizeof b, "%s/%s", to, e->d_name) >= sizeof b) {
            errno = ENAMETOOLONG;
            rc = -1;
            break;
        }
        struct stat st;
        if (lstat(a, &st) != 0)
            rc = -1;
        else if (S_ISDIR(st.st_mode))
            rc = copy_dir(a, b, depth + 1);
        else if (S_ISREG(st.st_mode))
            rc = copy_file(a, b);
    }
    int err = errno;
    closedir(d);
    errno = err;
    return rc;
}

/* Every case exactly once among the shards; prints the ones that are
 * not. holder[i]: the shard that holds case i. */
static bool check_cases(const struct kn_report_sweep *s, const char *const *dirs, int ndirs,
                        int *holder, FILE *msg)
{
    size_t missing = 0, twice = 0;
    for (size_t i = 0; i < s->ncases; i++) {
        holder[i] = -1;
        for (int d = 0; d < ndirs; d++) {
            if (!has_result(dirs[d], s->cases[i].id))
                continue;
            if (holder[i] >= 0) {
                if (twice++ < MAX_NAMED)
                    fprintf(msg, SAY "case %s is in both %s and %s\n", s->cases[i].id,
                            dirs[holder[i]], dirs[d]);
                continue;
            }
            holder[i] = d;
        }
        if (holder[i] < 0 && missing++ < MAX_NAMED) {
            fprintf(msg, SAY "case %s (", s->cases[i].id);
            for (size_t k = 0; k < s->nparams; k++) {
                char v[128];
                kn_report_value_text(&s->params[k], s->cases[i].vidx[k], v, sizeof v);
                fprintf(msg, "%s%s=%s", k ? " " : "", s->params[k].name, v);
            }
            fputs(") is in none of the directories\n", msg);
        }
    }
    if (missing > MAX_NAMED)
        fprintf(msg, SAY "and %zu more cases missing\n", missing - MAX_NAMED);
    if (twice > MAX_NAMED)
        fprintf(msg, SAY "and %zu more cases held twice\n", twice - MAX_NAMED);
    if (missing || twice)
        fprintf(msg,
                SAY "%zu of %zu cases missing, %zu held twice: not the shards of one whole "
                    "sweep\n",
                missing, s->ncases, twice);
    return missing == 0 && twice == 0;
}

/* outdir may take the merge: not one of the shards, and empty or
 * holding this very sweep. */
static bool check_outdir(const char *outdir, const char *const *dirs, int ndirs, const char *hash,
                         FILE *msg)
{
    if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
        fprintf(msg, SAY "%s: %s\n", outdir, strerror(errno));
        return false;
    }
    char *out = realpath(outdir, NULL);
    if (!out) {
        fprintf(msg, SAY "%s: %s\n", outdir, strerror(errno));
        return false;
    }
    bool ok = true;
    for (int d = 0; ok && d < ndirs; d++) {
        char *in = realpath(dirs[d], NULL);
        if (in && strcmp(in, out) == 0) {
            fprintf(msg, SAY "the output directory %s is one of the shards\n", outdir);
            ok = false;
        }
        free(in);
    }
    free(out);
    struct kn_report_sweep old;
    memset(&old, 0, sizeof old);
    char err[600];
    if (ok && kn_report_load_sweep(outdir, &old, err, sizeof err) == 0 &&
        strcmp(old.hash, hash) != 0) {
        fprintf(msg, SAY "%s holds another sweep (%s, hash %s); give an empty --out\n", outdir,
                old.name, old.hash);
        ok = false;
    }
    kn_report_sweep_free(&old);
    return ok;
}

static int write_json(const char *dir, const char *name, const cJSON *j, FILE *msg)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = cJSON_Print(j);
    int rc = -1;
    if (!text)
        errno = ENOMEM;
    else {
        size_t n = strlen(text);
        text[n] = '\n'; /* room for it where the NUL was */
        rc = kn_report_write_file(path, text, n + 1);
    }
    if (rc != 0)
        fprintf(msg, SAY "%s: %s\n", path, strerror(errno));
    free(text);
    return rc;
}

/* results.json: every case's result in case order; a result that could
 * not be read stands as an error saying why. */
static cJSON *results_json(const struct kn_report_sweep *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "format", 1);
    cJSON_AddStringToObject(o, "hash", s->hash);
    cJSON *list = cJSON_AddArrayToObject(o, "cases");
    for (size_t i = 0; list && i < s->ncases; i++) {
        const struct kn_report_case *c = &s->cases[i];
        cJSON *r = c->result ? cJSON_Duplicate(c->result, 1) : cJSON_CreateObject();
        if (r && !c->result) {
            cJSON_AddStringToObject(r, "id", c->id);
            cJSON_AddItemToObject(r, "params", cJSON_Duplicate(c->params, 1));
            cJSON_AddStringToObject(r, "status", "error");
            cJSON_AddStringToObject(r, "mode", "error");
            cJSON_AddStringToObject(r, "why", c->why ? c->why : "");
        }
        cJSON_AddItemToArray(list, r);
    }
    if (!list || cJSON_GetArraySize(list) != (int)s->ncases) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* The merged directory's files, once its cases are in: sweep.json
 * without the shard, results.json, the report. */
static int write_merged(const char *outdir, struct kn_report_sweep *s, FILE *msg)
{
    cJSON *doc = cJSON_Duplicate(s->doc, 1);
    cJSON *null = cJSON_CreateNull();
    if (!doc || !null) {
        cJSON_Delete(doc);
        cJSON_Delete(null);
        fprintf(msg, SAY "out of memory\n");
        return KN_REPORT_BAD;
    }
    if (cJSON_HasObjectItem(doc, "shard"))
        cJSON_ReplaceItemInObjectCaseSensitive(doc, "shard", null);
    else
        cJSON_AddItemToObject(doc, "shard", null);
    int rc = write_json(outdir, "sweep.json", doc, msg);
    cJSON_Delete(doc);
    if (rc != 0)
        return KN_REPORT_BAD;
    size_t bad = kn_report_load_results(outdir, s);
    cJSON *res = results_json(s);
    rc = res ? write_json(outdir, "results.json", res, msg) : -1;
    cJSON_Delete(res);
    if (rc != 0)
        return KN_REPORT_BAD;
    char err[600];
    if (kn_report_write(outdir, err, sizeof err) != 0) {
        fprintf(msg, SAY "%s\n", err);
        return KN_REPORT_BAD;
    }
    size_t pass = 0, fail = 0, error = 0;
    for (size_t i = 0; i < s->ncases; i++) {
        pass += s->cases[i].status == KN_SWEEPSTATS_PASS;
        fail += s->cases[i].status == KN_SWEEPSTATS_FAIL;
        error += s->cases[i].status == KN_SWEEPSTATS_ERROR;
    }
    fprintf(msg, SAY "%zu cases into %s: %zu passed, %zu failed, %zu errors", s->ncases, outdir,
            pass, fail, error);
    if (bad)
        fprintf(msg, " (%zu result files unreadable, counted as errors)", bad);
    fputs("\n", msg);
    return error ? KN_REPORT_ERRORS : KN_REPORT_OK;
}

int kn_report_merge(const char *const *dirs, int ndirs, const char *outdir, FILE *msg)
{
    if (ndirs < 1) {
        fprintf(msg, SAY "no shard directories given\n");
        return KN_REPORT_BAD;
    }
    struct kn_report_sweep first;
    char err[600];
    if (kn_report_load_sweep(dirs[0], &first, err, sizeof err) != 0) {
        fprintf(msg, SAY "%s\n", err);
        kn_report_sweep_free(&first);
        return KN_REPORT_BAD;
    }
    int rc = KN_REPORT_OK;
    for (int d = 1; rc == KN_REPORT_OK && d < ndirs; d++) {
        struct kn_report_sweep other;
        if (kn_report_load_sweep(dirs[d], &other, err, sizeof err) != 0) {
            fprintf(msg, SAY "%s\n", err);
            rc = KN_REPORT_BAD;
        } else if (strcmp(other.hash, first.hash) != 0) {
            fprintf(msg,
                    SAY "%s holds sweep %s (hash %s), %s holds sweep %s (hash %s): not shards of "
                        "one sweep\n",
                    dirs[0], first.name, first.hash, dirs[d], other.name, other.hash);
            rc = KN_REPORT_BAD;
        }
        kn_report_sweep_free(&other);
    }
    int *holder = calloc(first.ncases ? first.ncases : 1, sizeof *holder);
    if (rc == KN_REPORT_OK && !holder) {
        fprintf(msg, SAY "out of memory\n");
        rc = KN_REPORT_BAD;
    }
    if (rc == KN_REPORT_OK && !check_cases(&first, dirs, ndirs, holder, msg))
        rc = KN_REPORT_BAD;
    if (rc == KN_REPORT_OK && !check_outdir(outdir, dirs, ndirs, first.hash, msg))
        rc = KN_REPORT_BAD;
    char cases[4096];
    snprintf(cases, sizeof cases, "%s/cases", outdir);
    if (rc == KN_REPORT_OK && mkdir(cases, 0755) != 0 && errno != EEXIST) {
        fprintf(msg, SAY "%s: %s\n", cases, strerror(errno));
        rc = KN_REPORT_BAD;
    }
    for (size_t i = 0; rc == KN_REPORT_OK && i < first.ncases; i++) {
        char from[4096], to[4200];
        snprintf(from, sizeof from, "%s/cases/%s", dirs[holder[i]], first.cases[i].id);
        snprintf(to, sizeof to, "%s/%s", cases, first.cases[i].id);
        if (copy_dir(from, to, 0) != 0) {
            fprintf(msg, SAY "copying %s to %s: %s\n", from, to, strerror(errno));
            rc = KN_REPORT_BAD;
        }
    }
    if (rc == KN_REPORT_OK)
        rc = write_merged(outdir, &first, msg);
    free(holder);
    kn_report_sweep_free(&first);
    return rc;
}
