/* The sweep report's reading and writing side (tools/sweep/report*.c) on
 * synthetic output directories written as real files (synth.h): the
 * figures in report.json, the same bytes twice and under a comma locale,
 * missing and malformed results, sweep.json's errors, merging shards
 * (whole, overlapping, missing, another sweep, errored cases) and
 * comparing two runs (a boundary past OLD's interval, one within it,
 * the flips, another sweep, bad input). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "comma_locale.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "report.h"
#include "report_data.h"
#include "synth.h"

#define HASH_A "0123456789abcdef"
#define HASH_B "fedcba9876543210"

/* ---- outcomes ---- */

/* Passes up to height index *arg, fails above. */
static enum synth_outcome up_to(int h, int seed, void *arg)
{
    (void)seed;
    return h <= *(int *)arg ? SYN_PASS : SYN_FAIL;
}

/* ---- helpers ---- */

static char *dup_path(const char *name)
{
    char *p = strdup(h_path(name));
    ck_assert_ptr_nonnull(p);
    return p;
}

static cJSON *read_json(const char *path)
{
    size_t len;
    char *text = kn_report_read_file(path, 1u << 24, &len);
    ck_assert_msg(text != NULL, "%s cannot be read", path);
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "%s is not JSON", path);
    free(text);
    return j;
}

static double num_at(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", key);
    return v->valuedouble;
}

static const cJSON *boundary0(const cJSON *rep)
{
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rep, "boundaries"), 0);
    ck_assert_ptr_nonnull(b);
    return b;
}

static void write_report(const char *dir)
{
    char err[600] = "";
    ck_assert_msg(kn_report_write(dir, err, sizeof err) == 0, "kn_report_write: %s", err);
}

/* ---- report ---- */

/* One case per height, passing up to 0.15: point 0.15, nothing
 * confident, interval [0.10, 0.16] (Wilson 1/1 lo 0.21, 0/1 hi 0.79). */
START_TEST(report_figures)
{
    char *dir = dup_path("one");
    int upto = 5;
    struct synth sw = { "heights", HASH_A, 10, 1, 0, 0, up_to, &upto, false };
    synth_write(dir, &sw);
    write_report(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/report.json", dir);
    cJSON *rep = read_json(path);
    ck_assert_int_eq((int)num_at(rep, "cases"), 10);
    ck_assert_int_eq((int)num_at(rep, "passed"), 6);
    ck_assert_int_eq((int)num_at(rep, "failed"), 4);
    ck_assert_int_eq((int)num_at(rep, "errors"), 0);
    ck_assert_int_eq((int)num_at(rep, "not_run"), 0);
    ck_assert_double_eq_tol(num_at(rep, "sim_s_total"), 102.5, 1e-9);
    ck_assert_int_eq((int)num_at(cJSON_GetObjectItemCaseSensitive(rep, "modes"), "tip-over"), 4);
    const cJSON *b = boundary0(rep);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(b, "parameter")->valuestring,
                     "step_height_m");
    ck_assert_double_eq_tol(num_at(b, "point"), 0.15, 1e-12);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(b, "confident")));
    const cJSON *iv = cJSON_GetObjectItemCaseSensitive(b, "interval");
    ck_assert_double_eq_tol(cJSON_GetArrayItem(iv, 0)->valuedouble, 0.10, 1e-12);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(iv, 1)->valuedouble, 0.16, 1e-12);
    /* the per-value table: 0.15 passed once (Wilson 1/1: 0.206549 to
     * 1), 0.16 failed once (0 to 0.793451) */
    const cJSON *vals = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(rep, "parameters"), 0), "values");
    ck_assert_int_eq(cJSON_GetArraySize(vals), 10);
    const cJSON *v5 = cJSON_GetArrayItem(vals, 5), *v6 = cJSON_GetArrayItem(vals, 6);
    ck_assert_double_eq_tol(num_at(v5, "rate"), 1, 1e-12);
    ck_assert_double_eq_tol(num_at(v5, "lo"), 0.206549, 1e-12);
    ck_assert_double_eq_tol(num_at(v6, "rate"), 0, 1e-12);
    ck_assert_double_eq_tol(num_at(v6, "hi"), 0.793451, 1e-12);
    /* the seed has no harder direction: one boundary only */
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(rep, "boundaries")), 1);
    const cJSON *fails = cJSON_GetObjectItemCaseSensitive(rep, "failures");
    ck_assert_int_eq(cJSON_GetArraySize(fails), 4);
    char id[11];
    synth_id(6, id);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fails, 0), "id")->valuestring, id);
    cJSON_Delete(rep);
    /* the page: a chart per parameter, the boundary in its table, the
     * failing case's trajectory linked */
    snprintf(path, sizeof path, "%s/report.html", dir);
    const char *html = h_file_text(path);
    ck_assert_ptr_nonnull(strstr(html, "<td class='point'>0.15</td>"));
    ck_assert_ptr_nonnull(strstr(html, "<td class='interval'>[0.1, 0.16]</td>"));
    int svgs = 0;
    for (const char *p = html; (p = strstr(p, "<svg")) != NULL; p++)
        svgs++;
    ck_assert_int_eq(svgs, 2);
    char link[64];
    snprintf(link, sizeof link, "href='cases/%s/trajectory.svg'", id);
    ck_assert_ptr_nonnull(strstr(html, link));
    ck_assert_ptr_nonnull(strstr(html, "--case "));
    free(dir);
}
END_TEST

/* The file at path holds exactly want[0..len). */
static void same_bytes(const char *path, const char *want, size_t len, const char *when)
{
    size_t got_len;
    char *got = kn_report_read_file(path, 1u << 24, &got_len);
    ck_assert_msg(got && got_len == len && memcmp(got, want, len) == 0, "%s differs %s", path,
                  when);
    free(got);
}

/* The same results give the same bytes: written twice, and again under a
 * locale whose decimal point is a comma. */
START_TEST(report_deterministic)
{
    char *dir = dup_path("det");
    int upto = 3;
    struct synth sw = { "det", HASH_A, 6, 3, 0, 0, up_to, &upto, false };
    synth_write(dir, &sw);
    char pj[4096], ph[4096];
    snprintf(pj, sizeof pj, "%s/report.json", dir);
    snprintf(ph, sizeof ph, "%s/report.html", dir);
    write_report(dir);
    size_t lj, lh;
    char *j1 = kn_report_read_file(pj, 1u << 24, &lj), *h1 = kn_report_read_file(ph, 1u << 24, &lh);
    ck_assert(j1 && h1);
    write_report(dir);
    same_bytes(pj, j1, lj, "written again");
    same_bytes(ph, h1, lh, "written again");
    if (h_comma_locale_enter("report_deterministic")) {
        write_report(dir);
        same_bytes(pj, j1, lj, "under a comma locale");
        same_bytes(ph, h1, lh, "under a comma locale");
    }
    free(j1);
    free(h1);
    free(dir);
}
END_TEST

/* A missing result is a case not run; a malformed one an error saying
 * why; the report is still written. */
START_TEST(report_missing_and_malformed)
{
    char *dir = dup_path("bad");
    int upto = 9;
    struct synth sw = { "bad", HASH_A, 4, 1, 0, 0, up_to, &upto, false };
    synth_write(dir, &sw);
    char path[4096], id[11];
    synth_id(0, id);
    snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, id);
    ck_assert_int_eq(remove(path), 0);
    synth_id(1, id);
    snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, id);
    h_write_file(path, "{\"id\": \"");
    synth_id(2, id);
    snprintf(path, sizeof path, "%s/cases/%s/result.json", dir, id);
    h_write_file(path, "{\"id\": \"0000000000\", \"status\": \"pass\", \"mode\": \"none\"}");
    write_report(dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    cJSON *rep = read_json(path);
    ck_assert_int_eq((int)num_at(rep, "not_run"), 1);
    ck_assert_int_eq((int)num_at(rep, "errors"), 2);
    ck_assert_int_eq((int)num_at(rep, "passed"), 1);
    const cJSON *fails = cJSON_GetObjectItemCaseSensitive(rep, "failures");
    ck_assert_int_eq(cJSON_GetArraySize(fails), 2);
    ck_assert_str_eq(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fails, 0), "why")->valuestring,
        "result.json: not JSON");
    ck_assert_ptr_nonnull(
        strstr(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fails, 1), "why")->valuestring,
               "id: not"));
    cJSON_Delete(rep);
    /* no sweep.json: an error naming the file */
    char err[600];
    char *empty = dup_path("empty");
    synth_write(empty, &sw);
    snprintf(path, sizeof path, "%s/sweep.json", empty);
    ck_assert_int_eq(remove(path), 0);
    ck_assert_int_eq(kn_report_write(empty, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "sweep.json"));
    free(empty);
    free(dir);
}
END_TEST

/* sweep.json's decoder: each malformed document refused with a reason
 * that names what is wrong. */
START_TEST(sweep_json_errors)
{
    static const struct {
        const char *doc, *why;
    } bad[] = {
        { "", "not JSON" },
        { "[]", "not a JSON object" },
        { "{\"format\": 2}", "format" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"xyz\"}", "hash" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\"}", "parameters" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [],"
          " \"cases\": [{\"id\": \"../../etc1\", \"params\": {}}]}",
          "cases[0].id" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [{\"name\":"
          " \"h\", \"values\": [1, 2]}], \"cases\": [{\"id\": \"0123456789\", \"params\": {}}]}",
          "no value for \"h\"" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [{\"name\":"
          " \"h\", \"values\": [1, 2]}], \"cases\": [{\"id\": \"0123456789\", \"params\": {\"h\":"
          " 3}}]}",
          "not one of the parameter's values" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [{\"name\":"
          " \"h\", \"values\": [1]}], \"cases\": [{\"id\": \"0123456789\", \"params\": {\"h\": 1,"
          " \"x\": 1}}]}",
          "\"x\" is not a parameter" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [{\"name\":"
          " \"h\", \"values\": [1]}], \"cases\": [{\"id\": \"0123456789\", \"params\": {\"h\": 1}},"
          " {\"id\": \"0123456789\", \"params\": {\"h\": 1}}]}",
          "listed twice" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"parameters\": [{\"name\":"
          " \"h\", \"harder\": \"up\"}], \"cases\": []}",
          "harder" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"target_rate\": 1.5,"
          " \"parameters\": [], \"cases\": []}",
          "target_rate" },
        { "{\"format\": 1, \"name\": \"a\", \"hash\": \"" HASH_A "\", \"shard\": {\"k\": 3, \"n\":"
          " 2}, \"parameters\": [], \"cases\": []}",
          "shard" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct kn_report_sweep s;
        char err[600] = "";
        int rc = kn_report_parse_sweep(bad[i].doc, strlen(bad[i].doc), &s, err, sizeof err);
        kn_report_sweep_free(&s);
        ck_assert_msg(rc == -1 && strstr(err, bad[i].why), "%s: got %d \"%s\", want \"%s\"",
                      bad[i].doc, rc, err, bad[i].why);
    }
    /* a drawn parameter (no values list): the cases' values, in order */
    const char *ok = "{\"format\": 1, \"name\": \"u\", \"hash\": \"" HASH_A "\", \"parameters\":"
                     " [{\"name\": \"friction\", \"harder\": \"lower\", \"values\": null}],"
                     " \"cases\": [{\"id\": \"0000000001\", \"params\": {\"friction\": 0.7}},"
                     " {\"id\": \"0000000002\", \"params\": {\"friction\": 0.3}}]}";
    struct kn_report_sweep s;
    char err[600] = "";
    ck_assert_msg(kn_report_parse_sweep(ok, strlen(ok), &s, err, sizeof err) == 0, "%s", err);
    ck_assert_uint_eq(s.params[0].nvalues, 2);
    ck_assert_double_eq(s.params[0].values[0].num, 0.3);
    ck_assert_uint_eq(s.cases[0].vidx[0], 1);
    ck_assert_int_eq(s.params[0].harder, -1);
    kn_report_sweep_free(&s);
}
END_TEST

/* ---- merge ---- */

static int merge(char *const *dirs, int n, const char *out, char **msg)
{
    size_t len;
    *msg = NULL;
    FILE *f = open_memstream(msg, &len);
    ck_assert_ptr_nonnull(f);
    int rc = kn_report_merge((const char *const *)dirs, n, out, f);
    fclose(f);
    return rc;
}

/* Three shards of a 6 x 2 sweep (cases i % 3): written, merged. */
static void shards(char *dirs[3], const char *tag, const char *hash, int upto_store[1])
{
    for (int k = 1; k <= 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "%s-shard%d", tag, k);
        dirs[k - 1] = dup_path(name);
        struct synth sw = { "heights", hash, 6, 2, k, 3, up_to, upto_store, false };
        synth_write(dirs[k - 1], &sw);
    }
}

START_TEST(merge_whole)
{
    char *dirs[3], *msg;
    int upto = 3;
    shards(dirs, "w", HASH_A, &upto);
    char *out = dup_path("merged");
    int rc = merge(dirs, 3, out, &msg);
    ck_assert_msg(rc == KN_REPORT_OK, "merge %d: %s", rc, msg);
    ck_assert_ptr_nonnull(strstr(msg, "12 cases"));
    free(msg);
    char path[4096], id[11];
    snprintf(path, sizeof path, "%s/sweep.json", out);
    cJSON *sweep = read_json(path);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(sweep, "shard")));
    cJSON_Delete(sweep);
    snprintf(path, sizeof path, "%s/results.json", out);
    cJSON *res = read_json(path);
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(res, "cases");
    ck_assert_int_eq(cJSON_GetArraySize(cases), 12);
    for (int i = 0; i < 12; i++) {
        synth_id(i, id);
        ck_assert_str_eq(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cases, i), "id")->valuestring, id);
        snprintf(path, sizeof path, "%s/cases/%s/trajectory.svg", out, id);
        ck_assert_msg(h_file_text(path)[0] != '\0', "%s not copied", path);
    }
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(res, "hash")->valuestring, HASH_A);
    cJSON_Delete(res);
    snprintf(path, sizeof path, "%s/report.json", out);
    cJSON *rep = read_json(path);
    ck_assert_int_eq((int)num_at(rep, "passed"), 8);
    ck_assert_int_eq((int)num_at(rep, "not_run"), 0);
    ck_assert_double_eq_tol(num_at(boundary0(rep), "point"), 0.13, 1e-12);
    cJSON_Delete(rep);
    /* merging again into the same directory is fine; into one of the
     * shards is not */
    ck_assert_int_eq(merge(dirs, 3, out, &msg), KN_REPORT_OK);
    free(msg);
    ck_assert_int_eq(merge(dirs, 3, dirs[0], &msg), KN_REPORT_BAD);
    ck_assert_ptr_nonnull(strstr(msg, "one of the shards"));
    free(msg);
    for (int k = 0; k < 3; k++)
        free(dirs[k]);
    free(out);
}
END_TEST

START_TEST(merge_refused)
{
    char *dirs[3], *msg;
    int upto = 3;
    shards(dirs, "r", HASH_A, &upto);
    char *out = dup_path("refused");
    /* a shard missing: its cases named */
    ck_assert_int_eq(merge(dirs, 2, out, &msg), KN_REPORT_BAD);
    char id[11], want[64];
    synth_id(2, id);
    snprintf(want, sizeof want, "case %s (step_height_m=0.11 seed=1) is in none", id);
    ck_assert_msg(strstr(msg, want), "%s", msg);
    ck_assert_ptr_nonnull(strstr(msg, "4 of 12 cases missing"));
    free(msg);
    /* overlap: case 0 also in shard 2 */
    synth_id(0, id);
    char from[4096], to[4096];
    snprintf(from, sizeof from, "%s/cases/%s/result.json", dirs[0], id);
    snprintf(to, sizeof to, "%s/cases/%s", dirs[1], id);
    ck_assert_int_eq(mkdir(to, 0755), 0);
    snprintf(to, sizeof to, "%s/cases/%s/result.json", dirs[1], id);
    h_write_file(to, h_file_text(from));
    ck_assert_int_eq(merge(dirs, 3, out, &msg), KN_REPORT_BAD);
    snprintf(want, sizeof want, "case %s is in both", id);
    ck_assert_msg(strstr(msg, want), "%s", msg);
    free(msg);
    /* the same shard twice: every case of it twice */
    char *twice[2] = { dirs[2], dirs[2] };
    ck_assert_int_eq(merge(twice, 2, out, &msg), KN_REPORT_BAD);
    ck_assert_ptr_nonnull(strstr(msg, "is in both"));
    free(msg);
    /* another sweep's shard */
    char *other[3];
    shards(other, "o", HASH_B, &upto);
    char *mixed[3] = { dirs[0], other[1], dirs[2] };
    ck_assert_int_eq(merge(mixed, 3, out, &msg), KN_REPORT_BAD);
    ck_assert_msg(strstr(msg, "not shards of one sweep") && strstr(msg, HASH_B), "%s", msg);
    free(msg);
    /* a directory without a sweep */
    char *none[1] = { out };
    ck_assert_int_eq(merge(none, 1, h_path("x"), &msg), KN_REPORT_BAD);
    ck_assert_ptr_nonnull(strstr(msg, "sweep.json"));
    free(msg);
    for (int k = 0; k < 3; k++) {
        free(dirs[k]);
        free(other[k]);
    }
    free(out);
}
END_TEST

/* Every seed-2 case errored: merged, exit 3. */
static enum synth_outcome seed2_errors(int h, int seed, void *arg)
{
    (void)arg;
    return seed == 2 ? SYN_ERROR : h < 3 ? SYN_PASS : SYN_FAIL;
}

START_TEST(merge_errors)
{
    char *dirs[2], *msg;
    for (int k = 1; k <= 2; k++) {
        char name[64];
        snprintf(name, sizeof name, "e-shard%d", k);
        dirs[k - 1] = dup_path(name);
        struct synth sw = { "heights", HASH_A, 3, 2, k, 2, seed2_errors, NULL, false };
        synth_write(dirs[k - 1], &sw);
    }
    char *out = dup_path("merged-e");
    ck_assert_int_eq(merge(dirs, 2, out, &msg), KN_REPORT_ERRORS);
    ck_assert_ptr_nonnull(strstr(msg, "3 errors"));
    free(msg);
    free(dirs[0]);
    free(dirs[1]);
    free(out);
}
END_TEST

/* ---- compare ---- */

static int compare(const char *a, const char *b, char **out)
{
    size_t len;
    *out = NULL;
    FILE *f = open_memstream(out, &len);
    ck_assert_ptr_nonnull(f);
    int rc = kn_report_compare(a, b, f);
    fclose(f);
    return rc;
}

/* 80 seeds per height: OLD passes 0.10 to 0.12 with every seed (Wilson
 * lo 0.954 >= 0.95: confidently), so its interval starts at 0.13; NEW
 * passes only 0.10: its point 0.10 is easier than 0.12 and than the
 * interval: a regression. */
START_TEST(compare_boundary_regressed)
{
    char *a = dup_path("old"), *b = dup_path("new"), *out;
    int old_upto = 2, new_upto = 0;
    struct synth so = { "heights", HASH_A, 4, 80, 0, 0, up_to, &old_upto, true };
    struct synth sn = { "heights", HASH_A, 4, 80, 0, 0, up_to, &new_upto, true };
    synth_write(a, &so);
    synth_write(b, &sn);
    ck_assert_int_eq(compare(a, b, &out), KN_REPORT_REGRESSION);
    ck_assert_msg(strstr(out, "step_height_m boundary: 0.12 -> 0.1 (OLD's 95 % interval [0.13, "
                              "0.13]): REGRESSION"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "160 changed status"));
    ck_assert_ptr_nonnull(strstr(out, "pass->fail"));
    free(out);
    /* the other way round: better, no regression */
    ck_assert_int_eq(compare(b, a, &out), KN_REPORT_OK);
    ck_assert_ptr_nonnull(strstr(out, "fail->pass"));
    ck_assert_ptr_nonnull(strstr(out, "harder"));
    free(out);
    free(a);
    free(b);
}
END_TEST

/* One case per height: OLD's point 0.15, interval [0.10, 0.16]; NEW's
 * 0.13 is within it, and 4 of 10 passing is not below OLD's lower bound
 * (6/10: 0.313): no regression, the two flips listed. */
START_TEST(compare_within_interval)
{
    char *a = dup_path("old1"), *b = dup_path("new1"), *out;
    int old_upto = 5, new_upto = 3;
    struct synth so = { "heights", HASH_A, 10, 1, 0, 0, up_to, &old_upto, true };
    struct synth sn = { "heights", HASH_A, 10, 1, 0, 0, up_to, &new_upto, true };
    synth_write(a, &so);
    synth_write(b, &sn);
    ck_assert_int_eq(compare(a, b, &out), KN_REPORT_OK);
    ck_assert_msg(strstr(out, "0.15 -> 0.13") && strstr(out, "within the interval"), "%s", out);
    char id[11], want[96];
    for (int i = 4; i <= 5; i++) {
        synth_id(i, id);
        snprintf(want, sizeof want, "pass->fail %s step_height_m=0.1%d seed=1", id, i);
        ck_assert_msg(strstr(out, want), "no \"%s\" in\n%s", want, out);
    }
    ck_assert_ptr_nonnull(strstr(out, "2 changed status"));
    free(out);
    /* NEW passing 3 of 10 is below 0.313: the rate regressed */
    new_upto = 2;
    synth_write(b, &sn);
    ck_assert_int_eq(compare(a, b, &out), KN_REPORT_REGRESSION);
    ck_assert_msg(strstr(out, "0.600 -> 0.300") && strstr(out, "below the interval"), "%s", out);
    free(out);
    free(a);
    free(b);
}
END_TEST

START_TEST(compare_other_sweep_and_bad_input)
{
    char *a = dup_path("oa"), *b = dup_path("ob"), *out;
    int upto = 5;
    struct synth so = { "heights", HASH_A, 10, 1, 0, 0, up_to, &upto, false };
    struct synth sn = { "more-heights", HASH_B, 12, 1, 0, 0, up_to, &upto, false };
    synth_write(a, &so);
    synth_write(b, &sn);
    ck_assert_int_eq(compare(a, b, &out), KN_REPORT_OK);
    ck_assert_msg(strstr(out, "different sweeps") && strstr(out, "10 common cases"), "%s", out);
    free(out);
    ck_assert_int_eq(compare(a, h_path("nowhere"), &out), KN_REPORT_BAD);
    ck_assert_ptr_nonnull(strstr(out, "nowhere/sweep.json"));
    free(out);
    free(a);
    free(b);
}
END_TEST

/* The comma locale only for the case that needs it: compiling one with
 * localedef takes seconds. */
static void locale_setup(void)
{
    h_setup();
    h_comma_locale_setup();
}

static void locale_teardown(void)
{
    h_comma_locale_teardown();
    h_teardown();
}

int main(void)
{
    const struct h_case cases[] = {
        { "report_figures", report_figures, 30, NULL, NULL },
        { "report_deterministic", report_deterministic, 60, locale_setup, locale_teardown },
        { "report_missing_and_malformed", report_missing_and_malformed, 30, NULL, NULL },
        { "sweep_json_errors", sweep_json_errors, 30, NULL, NULL },
        { "merge_whole", merge_whole, 30, NULL, NULL },
        { "merge_refused", merge_refused, 30, NULL, NULL },
        { "merge_errors", merge_errors, 30, NULL, NULL },
        { "compare_boundary_regressed", compare_boundary_regressed, 60, NULL, NULL },
        { "compare_within_interval", compare_within_interval, 30, NULL, NULL },
        { "compare_other_sweep_and_bad_input", compare_other_sweep_and_bad_input, 30, NULL, NULL },
    };
    return h_run_cases("sweep-report", cases, sizeof cases / sizeof cases[0]);
}
