/* The printed table, the target verdicts and the machine description.
 * Rows are collected while the benchmarks run and printed at the end, so
 * progress messages on stderr never tear the table apart. */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MAX_ROWS 256

struct row {
    char item[48], metric[40], base_name[24], target[40];
    char text[200]; /* a note's text */
    double ours, base;
    int verdict; /* -1 none, 0 FAIL, 1 pass */
    bool note;
};

static struct row rows[MAX_ROWS];
static int nrows;

static struct row *new_row(void)
{
    if (nrows == MAX_ROWS)
        return NULL;
    struct row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->verdict = -1;
    r->ours = r->base = NAN;
    return r;
}

void kn_bench_row(const char *item, const char *metric, double ours, const char *base_name,
                  double base)
{
    struct row *r = new_row();
    if (!r)
        return;
    snprintf(r->item, sizeof r->item, "%s", item);
    snprintf(r->metric, sizeof r->metric, "%s", metric);
    snprintf(r->base_name, sizeof r->base_name, "%s", base_name ? base_name : "");
    r->ours = ours;
    r->base = base;
}

static bool holds(double v, enum kn_bench_cmp op, double limit)
{
    if (!isfinite(v))
        return false;
    return op == KN_BENCH_LE ? v <= limit : v >= limit;
}

static void fmt_num(char *buf, size_t n, double v)
{
    if (!isfinite(v))
        snprintf(buf, n, "-");
    else if (fabs(v) >= 1000)
        snprintf(buf, n, "%.0f", v);
    else if (fabs(v) >= 10)
        snprintf(buf, n, "%.1f", v);
    else
        snprintf(buf, n, "%.2f", v);
}

static void add_target(cJSON *targets, const char *item, const char *metric, double v,
                       enum kn_bench_cmp op, double limit, bool ok)
{
    if (!targets)
        return;
    cJSON *t = cJSON_CreateObject();
    char name[128];
    snprintf(name, sizeof name, "%s: %s", item, metric);
    cJSON_AddStringToObject(t, "metric", name);
    if (isfinite(v))
        cJSON_AddNumberToObject(t, "value", round(v * 1000.0) / 1000.0);
    else
        cJSON_AddNullToObject(t, "value");
    cJSON_AddStringToObject(t, "op", op == KN_BENCH_LE ? "<=" : ">=");
    cJSON_AddNumberToObject(t, "limit", limit);
    cJSON_AddBoolToObject(t, "pass", ok);
    cJSON_AddItemToArray(targets, t);
}

bool kn_bench_row_target(cJSON *targets, const char *item, const char *metric, double ours,
                         const char *base_name, double base, enum kn_bench_cmp op, double limit,
                         const char *unit)
{
    kn_bench_row(item, metric, ours, base_name, base);
    bool ok = holds(ours, op, limit);
    if (nrows > 0) {
        struct row *r = &rows[nrows - 1];
        char l[16];
        fmt_num(l, sizeof l, limit);
        snprintf(r->target, sizeof r->target, "%s %s%s%.8s", op == KN_BENCH_LE ? "<=" : ">=", l,
                 unit && *unit ? " " : "", unit ? unit : "");
        r->verdict = ok;
    }
    add_target(targets, item, metric, ours, op, limit, ok);
    return ok;
}

bool kn_bench_target(cJSON *targets, const char *item, const char *metric, double value,
                     enum kn_bench_cmp op, double limit)
{
    bool ok = holds(value, op, limit);
    struct row *r = new_row();
    if (r) {
        snprintf(r->item, sizeof r->item, "%s", item);
        snprintf(r->metric, sizeof r->metric, "%s", metric);
        r->ours = value;
        char l[16];
        fmt_num(l, sizeof l, limit);
        snprintf(r->target, sizeof r->target, "%s %s", op == KN_BENCH_LE ? "<=" : ">=", l);
        r->verdict = ok;
    }
    add_target(targets, item, metric, value, op, limit, ok);
    return ok;
}

void kn_bench_note(const char *fmt, ...)
{
    struct row *r = new_row();
    if (!r)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->text, sizeof r->text, fmt, ap);
    va_end(ap);
    r->note = true;
}

void kn_bench_table_print(FILE *f)
{
    fprintf(f, "%-40.40s %-24s %12s %-24s %7s  %-16s %s\n", "item", "metric", "kenaf-sim",
            "baseline", "ratio", "target", "");
    for (int i = 0; i < 40 + 1 + 24 + 1 + 12 + 1 + 24 + 1 + 7 + 2 + 16 + 5; i++)
        fputc('-', f);
    fputc('\n', f);
    for (int i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        if (r->note) {
            fprintf(f, "  %s\n", r->text);
            continue;
        }
        char ours[24], base[40], ratio[24], bv[24];
        fmt_num(ours, sizeof ours, r->ours);
        fmt_num(bv, sizeof bv, r->base);
        if (r->base_name[0] || isfinite(r->base))
            snprintf(base, sizeof base, "%s %s", r->base_name, bv);
        else
            base[0] = '\0';
        if (isfinite(r->ours) && isfinite(r->base) && r->base > 0)
            snprintf(ratio, sizeof ratio, "%.2f", r->ours / r->base);
        else
            ratio[0] = '\0';
        fprintf(f, "%-40.40s %-24s %12s %-24s %7s  %-16s %s\n", r->item, r->metric, ours, base,
                ratio, r->target,
                r->verdict < 0 ? ""
                : r->verdict   ? "pass"
                               : "FAIL");
    }
}

/* ---- the machine ---------------------------------------------------- */

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                c[strcspn(c, "\n")] = '\0';
                snprintf(buf, n, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static void loadavg(char *buf, size_t n)
{
    buf[0] = '\0';
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return;
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(buf, n, "%.2f %.2f %.2f", a, b, c);
    fclose(f);
}

#ifndef KN_BENCH_BUILDTYPE
#define KN_BENCH_BUILDTYPE "unknown"
#endif

cJSON *kn_bench_machine_json(void)
{
    cJSON *m = cJSON_CreateObject();
    char cpu[256], la[64];
    struct utsname u;
    cpu_model(cpu, sizeof cpu);
    loadavg(la, sizeof la);
    cJSON_AddNumberToObject(m, "nproc", kn_bench_ncpu());
    cJSON_AddStringToObject(m, "cpu", cpu);
    cJSON_AddStringToObject(m, "kernel", uname(&u) == 0 ? u.release : "unknown");
    cJSON_AddStringToObject(m, "loadavg_at_start", la);
    cJSON_AddStringToObject(m, "buildtype", KN_BENCH_BUILDTYPE);
    return m;
}

void kn_bench_machine_print(FILE *f, const char *mode)
{
    char cpu[256], la[64];
    struct utsname u;
    cpu_model(cpu, sizeof cpu);
    loadavg(la, sizeof la);
    fprintf(f, "kenaf-bench (%s): %d CPU, %s, Linux %s, load %s, %s build\n", mode, kn_bench_ncpu(),
            cpu, uname(&u) == 0 ? u.release : "?", la, KN_BENCH_BUILDTYPE);
    if (strcmp(KN_BENCH_BUILDTYPE, "release") != 0)
        fprintf(f, "note: not a release build; configure with -Dbuildtype=release to measure\n");
}
