/* kenaf-trial-report: a trial's score from the engine judge's verdict
 * and trajectory (kenaf-sim-run --trial runs it after the run: score.json
 * and score.html), and a history of several scores of one trial and
 * program (kenaf-sim-run --trial-history: history.html and a table on
 * standard output). docs/scenario-runs.md#trials says what each holds. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cJSON.h>

#include "score.h"

#define ME "kenaf-trial-report"
#define MAX_FILE (64u << 20) /* a trajectory of 100 Hz samples for hours */
#define MAX_SESSIONS 10000

static void usage(FILE *f)
{
    fprintf(f,
            "usage: " ME " --verdict FILE --trajectory CSV --out DIR [--program NAME]\n"
            "           [--trial-file FILE] [--seed N] [--date ISO8601] [--status S] [--why TEXT]\n"
            "       " ME " --history --out DIR SCORE...\n"
            "Writes a trial's score (DIR/score.json, DIR/score.html), or the history of\n"
            "several (each SCORE a score.json or a directory holding one) as\n"
            "DIR/history.html with its table on standard output.\n"
            "Exit status: 0 written, 2 bad input or a file that cannot be written.\n");
}

/* The whole file, NUL-terminated; NULL with the reason in err. */
static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            size_t nc = cap ? 2 * cap : 65536;
            char *nb = nc <= MAX_FILE + 1 ? realloc(buf, nc) : NULL;
            if (!nb) {
                snprintf(err, errlen, "%s: larger than %u MiB or out of memory", path,
                         MAX_FILE >> 20);
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
            cap = nc;
        }
        size_t r = fread(buf + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        snprintf(err, errlen, "cannot read %s", path);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The trajectory CSV (kenaf-engine's columns): time, x, y, yaw. A file
 * that is not one gives no path, said on stderr; the score stands. */
struct path_buf {
    struct kn_trialscore_path p;
    double *t, *x, *y, *yaw;
};

static int column(const char *header, const char *name)
{
    int i = 0;
    for (const char *p = header; *p; i++) {
        size_t n = strcspn(p, ",\n\r");
        if (n == strlen(name) && strncmp(p, name, n) == 0)
            return i;
        p += n;
        if (*p != ',')
            break;
        p++;
    }
    return -1;
}

static void read_path(const char *path, struct path_buf *pb)
{
    memset(pb, 0, sizeof *pb);
    char err[600];
    size_t len;
    char *text = slurp(path, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, ME ": %s (no path drawn)\n", err);
        return;
    }
    int ct = column(text, "t_s"), cx = column(text, "x_m"), cy = column(text, "y_m"),
        cw = column(text, "yaw_rad");
    size_t rows = 0;
    for (const char *p = text; *p; p++)
        rows += *p == '\n';
    if (ct < 0 || cx < 0 || cy < 0 || cw < 0 || rows == 0) {
        fprintf(stderr, ME ": %s: not a trajectory CSV (t_s, x_m, y_m, yaw_rad; no path drawn)\n",
                path);
        free(text);
        return;
    }
    pb->t = malloc(rows * sizeof *pb->t);
    pb->x = malloc(rows * sizeof *pb->x);
    pb->y = malloc(rows * sizeof *pb->y);
    pb->yaw = malloc(rows * sizeof *pb->yaw);
    size_t n = 0;
    const char *line = strchr(text, '\n');
    while (pb->t && pb->x && pb->y && pb->yaw && line && line[1] && n < rows) {
        line++;
        double v[4] = { NAN, NAN, NAN, NAN };
        const int want[4] = { ct, cx, cy, cw };
        int col = 0;
        for (const char *p = line; *p && *p != '\n'; col++) {
            for (int k = 0; k < 4; k++)
                if (col == want[k])
                    v[k] = strtod(p, NULL);
            p += strcspn(p, ",\n");
            if (*p == ',')
                p++;
        }
        pb->t[n] = v[0];
        pb->x[n] = v[1];
        pb->y[n] = v[2];
        pb->yaw[n] = v[3];
        n++;
        line = strchr(line, '\n');
    }
    pb->p = (struct kn_trialscore_path){ n, pb->t, pb->x, pb->y, pb->yaw };
    free(text);
}

static void free_path(struct path_buf *pb)
{
    free(pb->t);
    free(pb->x);
    free(pb->y);
    free(pb->yaw);
}

static int mkdirs(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, ME ": cannot write %s: %s\n", path, strerror(errno));
    return f;
}

static int close_out(FILE *f, int rc, const char *path)
{
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, ME ": writing %s failed\n", path);
        return 2;
    }
    return 0;
}

struct opts {
    const char *verdict, *trajectory, *out, *program, *trial_file, *seed, *date, *status, *why;
    int history;
};

static int score(const struct opts *o)
{
    char err[700], path[4200];
    size_t len;
    char *text = slurp(o->verdict, &len, err, sizeof err);
    if (!text) {
        fprintf(stderr, ME ": %s\n", err);
        return 2;
    }
    struct kn_trialscore *s = calloc(1, sizeof *s);
    if (!s) {
        free(text);
        return 2;
    }
    snprintf(s->program, sizeof s->program, "%s", o->program ? o->program : "");
    snprintf(s->trial_file, sizeof s->trial_file, "%s", o->trial_file ? o->trial_file : "");
    s->seed = o->seed ? strtoll(o->seed, NULL, 10) : -1;
    if (o->date) {
        snprintf(s->date, sizeof s->date, "%s", o->date);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(s->date, sizeof s->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    int rc = kn_trialscore_from_verdict(text, len, s, err, sizeof err);
    free(text);
    if (rc) {
        fprintf(stderr, ME ": %s: %s\n", o->verdict, err);
        free(s);
        return 2;
    }
    /* the run's own verdict where it differs from the engine's (a
     * program that exited with an error) */
    if (o->status)
        snprintf(s->verdict, sizeof s->verdict, "%s", o->status);
    if (o->why)
        snprintf(s->why, sizeof s->why, "%s", o->why);
    if (mkdirs(o->out)) {
        fprintf(stderr, ME ": cannot make %s: %s\n", o->out, strerror(errno));
        free(s);
        return 2;
    }
    cJSON *j = kn_trialscore_json(s);
    char *printed = j ? cJSON_Print(j) : NULL;
    cJSON_Delete(j);
    FILE *f = printed ? open_out(o->out, "score.json", path, sizeof path) : NULL;
    rc = f ? close_out(f, fprintf(f, "%s\n", printed) < 0, path) : 2;
    free(printed);
    struct path_buf pb;
    read_path(o->trajectory, &pb);
    f = rc == 0 ? open_out(o->out, "score.html", path, sizeof path) : NULL;
    if (f)
        rc = close_out(f, kn_trialscore_html(f, s, &pb.p), path);
    else
        rc = 2;
    free_path(&pb);
    free(s);
    return rc;
}

static int by_date(const void *a, const void *b)
{
    const struct kn_trialscore *x = *(const struct kn_trialscore *const *)a;
    const struct kn_trialscore *y = *(const struct kn_trialscore *const *)b;
    return strcmp(x->date, y->date);
}

static int history(const struct opts *o, char **files, int n)
{
    if (n < 1 || n > MAX_SESSIONS) {
        fprintf(stderr, ME ": --history needs 1..%d score.json files or directories\n",
                MAX_SESSIONS);
        return 2;
    }
    struct kn_trialscore **s = calloc((size_t)n, sizeof(struct kn_trialscore *));
    int rc = s ? 0 : 2;
    for (int i = 0; rc == 0 && i < n; i++) {
        char path[4200], err[700];
        struct stat st;
        if (stat(files[i], &st) == 0 && S_ISDIR(st.st_mode))
            snprintf(path, sizeof path, "%s/score.json", files[i]);
        else
            snprintf(path, sizeof path, "%s", files[i]);
        size_t len;
        char *text = slurp(path, &len, err, sizeof err);
        s[i] = malloc(sizeof **s);
        if (!text || !s[i] || kn_trialscore_parse(text, len, s[i], err, sizeof err)) {
            fprintf(stderr, ME ": %s%s%s\n", text ? path : "", text ? ": " : "", err);
            rc = 2;
        }
        free(text);
        /* one trial of one program: a history of different ones says nothing */
        if (rc == 0 && i > 0 &&
            (strcmp(s[i]->trial, s[0]->trial) != 0 || strcmp(s[i]->program, s[0]->program) != 0)) {
            fprintf(stderr,
                    ME ": %s is trial %s of program %s, %s is trial %s of program %s: a history "
                       "is of one trial and one program\n",
                    files[0], s[0]->trial, s[0]->program, files[i], s[i]->trial, s[i]->program);
            rc = 2;
        }
    }
    if (rc == 0) {
        qsort(s, (size_t)n, sizeof(struct kn_trialscore *), by_date);
        printf("%-4s %-22s %-12s %-10s %-7s %-14s %s\n", "#", "date", "successes", "completed",
               "faults", "mean time [s]", "80% lower bound");
        for (int i = 0; i < n; i++) {
            char succ[32];
            snprintf(succ, sizeof succ, "%d/%d", s[i]->successes, s[i]->asked);
            printf("%-4d %-22s %-12s %-10d %-7d %-14.2f %.3f\n", i + 1, s[i]->date, succ,
                   s[i]->completed, s[i]->faults, kn_trialscore_mean_time(s[i]), s[i]->lower80);
        }
        char path[4200];
        FILE *f = mkdirs(o->out) == 0 ? open_out(o->out, "history.html", path, sizeof path) : NULL;
        if (!f) {
            fprintf(stderr, ME ": cannot write into %s\n", o->out);
            rc = 2;
        } else {
            rc = close_out(
                f, kn_trialscore_history_html(f, (const struct kn_trialscore *const *)s, (size_t)n),
                path);
        }
    }
    for (int i = 0; s && i < n; i++)
        free(s[i]);
    free(s);
    return rc;
}

int main(int argc, char **argv)
{
    enum {
        O_VERDICT = 256,
        O_TRAJ,
        O_OUT,
        O_PROGRAM,
        O_TRIAL_FILE,
        O_SEED,
        O_DATE,
        O_STATUS,
        O_WHY,
        O_HISTORY
    };
    static const struct option lo[] = {
        { "verdict", required_argument, NULL, O_VERDICT },
        { "trajectory", required_argument, NULL, O_TRAJ },
        { "out", required_argument, NULL, O_OUT },
        { "program", required_argument, NULL, O_PROGRAM },
        { "trial-file", required_argument, NULL, O_TRIAL_FILE },
        { "seed", required_argument, NULL, O_SEED },
        { "date", required_argument, NULL, O_DATE },
        { "status", required_argument, NULL, O_STATUS },
        { "why", required_argument, NULL, O_WHY },
        { "history", no_argument, NULL, O_HISTORY },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct opts o = { 0 };
    int ch;
    while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (ch) {
        case O_VERDICT: o.verdict = optarg; break;
        case O_TRAJ: o.trajectory = optarg; break;
        case O_OUT: o.out = optarg; break;
        case O_PROGRAM: o.program = optarg; break;
        case O_TRIAL_FILE: o.trial_file = optarg; break;
        case O_SEED: o.seed = optarg; break;
        case O_DATE: o.date = optarg; break;
        case O_STATUS: o.status = optarg; break;
        case O_WHY: o.why = optarg; break;
        case O_HISTORY: o.history = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!o.out || (o.history ? optind >= argc : (!o.verdict || !o.trajectory || optind < argc))) {
        usage(stderr);
        return 2;
    }
    return o.history ? history(&o, argv + optind, argc - optind) : score(&o);
}
