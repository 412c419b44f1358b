/* Unit tests of kenaf-view's page messages (tools/view/view_json.c) and
 * HTTP paths (tools/view/files.c): units and frames of the state message,
 * escaping, what a page may send, and every path that must be refused. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "files.h"
#include "harness_suite.h"
#include "view_json.h"

static double num(const cJSON *o, const char *key)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsNumber(e), "no number %s", key);
    return e->valuedouble;
}

static double at(const cJSON *o, const char *key, int i)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(cJSON_IsArray(a), "no array %s", key);
    return cJSON_GetArrayItem(a, i)->valuedouble;
}

START_TEST(state_units)
{
    struct kn_krp_status s;
    memset(&s, 0, sizeof s);
    s.time_us = 12345678;
    s.pos_mm[0] = 1500;
    s.pos_mm[1] = -250;
    s.pos_mm[2] = 98;
    s.rpy_cdeg[0] = 1000; /* 10 deg */
    s.rpy_cdeg[1] = -500;
    s.rpy_cdeg[2] = 18000; /* 180 deg */
    s.crawler_speed_mm_s[0] = 200;
    s.crawler_speed_mm_s[1] = -150;
    s.flipper_cdeg[0] = 4500;
    s.flipper_cdeg[3] = -11950;
    s.flipper_torque_mnm[1] = 2500;
    s.battery_mv = 24100;
    s.flags = KN_KRP_ST_BACKEND_UP | KN_KRP_ST_SIMULATED | KN_KRP_ST_STALE;
    char buf[KN_VJSON_STATE_MAX];
    size_t n = kn_vjson_state(buf, sizeof buf, 3, &s, 42, 987654321);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_eq(n, strlen(buf));
    cJSON *o = cJSON_Parse(buf);
    ck_assert_msg(o != NULL, "not JSON: %s", buf);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "type")->valuestring, "state");
    ck_assert_double_eq(num(o, "robot"), 3);
    ck_assert_double_eq_tol(num(o, "t"), 12.345678, 1e-9);
    ck_assert_double_eq_tol(at(o, "pos", 0), 1.5, 1e-9);
    ck_assert_double_eq_tol(at(o, "pos", 1), -0.25, 1e-9);
    ck_assert_double_eq_tol(at(o, "rpy", 0), 10 * 3.14159265358979 / 180, 1e-5);
    ck_assert_double_eq_tol(at(o, "rpy", 2), 3.14159, 1e-5);
    ck_assert_double_eq_tol(at(o, "belt", 0), 0.2, 1e-9);
    ck_assert_double_eq_tol(at(o, "belt", 1), -0.15, 1e-9);
    ck_assert_double_eq_tol(at(o, "flippers", 0), 0.78540, 1e-5);
    ck_assert_double_eq_tol(at(o, "flippers", 3), -2.08567, 1e-5);
    ck_assert_double_eq_tol(at(o, "torque", 1), 2.5, 1e-9);
    ck_assert_double_eq_tol(num(o, "battery"), 24.1, 1e-9);
    ck_assert_double_eq(num(o, "seq"), 42);
    ck_assert_double_eq(num(o, "srv_us"), 987654321);
    cJSON *f = cJSON_GetObjectItem(o, "flags");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(f, "BACKEND_UP")));
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(f, "STALE")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(f, "ESTOP")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(f, "WATCHDOG")));
    cJSON_Delete(o);
    /* the extremes still fit */
    for (int i = 0; i < 3; i++)
        s.pos_mm[i] = s.rpy_cdeg[i] = INT32_MIN;
    for (int i = 0; i < 4; i++)
        s.flipper_cdeg[i] = s.flipper_torque_mnm[i] = INT32_MIN;
    s.crawler_speed_mm_s[0] = s.crawler_speed_mm_s[1] = INT32_MIN;
    s.time_us = UINT64_MAX;
    n = kn_vjson_state(buf, sizeof buf, 15, &s, UINT64_MAX, UINT64_MAX);
    ck_assert_uint_gt(n, 0);
    o = cJSON_Parse(buf);
    ck_assert_ptr_nonnull(o);
    cJSON_Delete(o);
    ck_assert_uint_eq(kn_vjson_state(buf, 64, 0, &s, 1, 1), 0);
}
END_TEST

START_TEST(hello_link_world)
{
    struct kn_vjson_robot r[2] = { { "kenaf", "127.0.0.1:9750" }, { "a\"b\\c", "[::1]:9751" } };
    char *h = kn_vjson_hello("1.2.3", r, 2, NULL);
    cJSON *o = cJSON_Parse(h);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "server")->valuestring, "kenaf-view 1.2.3");
    ck_assert_ptr_null(cJSON_GetObjectItem(o, "cameras"));
    cJSON *arr = cJSON_GetObjectItem(o, "robots");
    ck_assert_int_eq(cJSON_GetArraySize(arr), 2);
    ck_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(arr, 1), "name")->valuestring,
                     "a\"b\\c");
    ck_assert_double_eq(num(cJSON_GetArrayItem(arr, 1), "id"), 1);
    cJSON_Delete(o);
    free(h);
    /* kenaf-view --cameras: the page learns where kenaf-cameras is */
    h = kn_vjson_hello("1.2.3", r, 1, "http://127.0.0.1:8081");
    o = cJSON_Parse(h);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "cameras")->valuestring, "http://127.0.0.1:8081");
    cJSON_Delete(o);
    free(h);

    char buf[256];
    ck_assert_uint_gt(kn_vjson_link(buf, sizeof buf, 2, false, "no STATUS for 1.0 s"), 0);
    ck_assert_str_eq(buf, "{\"type\":\"link\",\"robot\":2,\"up\":false,"
                          "\"reason\":\"no STATUS for 1.0 s\"}");
    ck_assert_uint_gt(kn_vjson_link(buf, sizeof buf, 0, true, NULL), 0);
    ck_assert_str_eq(buf, "{\"type\":\"link\",\"robot\":0,\"up\":true}");

    size_t len = 0;
    char *w = kn_vjson_world(1, "{\"a\":1}", 7, &len);
    ck_assert_str_eq(w, "{\"type\":\"world\",\"robot\":1,\"world\":{\"a\":1}}");
    ck_assert_uint_eq(len, strlen(w));
    free(w);
    w = kn_vjson_world(0, NULL, 0, &len);
    ck_assert_str_eq(w, "{\"type\":\"world\",\"robot\":0,\"world\":null}");
    free(w);
    ck_assert(kn_vjson_world_ok("{\"a\":[1,2]}\n", 12));
    ck_assert(!kn_vjson_world_ok("{\"a\":1}x", 8));
    ck_assert(!kn_vjson_world_ok("[1]", 3));
    ck_assert(!kn_vjson_world_ok("{\"a\":", 5));
    ck_assert(!kn_vjson_world_ok("{}", 1)); /* cut short */
}
END_TEST

/* The trial message: SI units and words, a name made printable, null
 * for no trial, and no limit as null. */
START_TEST(trial_message)
{
    struct kn_krp_trial t;
    memset(&t, 0, sizeof t);
    strcpy(t.name, "step\x01"
                   "field");
    t.course = KN_KRP_TRIAL_FIGURE8;
    t.flags = KN_KRP_TRIAL_F_ENDED;
    t.end = KN_KRP_TRIAL_END_TIP_OVER;
    t.reps = 10;
    t.rep = 4;
    t.rep_elapsed_ms = 12345;
    t.completed = 4;
    t.successes = 3;
    t.faults = 2;
    t.by_kind[KN_KRP_TF_TIP_OVER] = 1;
    t.by_kind[KN_KRP_TF_ASSIST] = 1;
    t.limit_ms = 600000;
    t.left_ms = 12000;
    char out[KN_VJSON_TRIAL_MAX];
    size_t n = kn_vjson_trial(out, sizeof out, 3, &t);
    ck_assert_uint_gt(n, 0);
    cJSON *o = cJSON_ParseWithLength(out, n);
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(cJSON_GetObjectItem(o, "type")->valuestring, "trial");
    ck_assert_double_eq(num(o, "robot"), 3);
    const cJSON *x = cJSON_GetObjectItem(o, "trial");
    ck_assert_str_eq(cJSON_GetObjectItem(x, "name")->valuestring, "step?field");
    ck_assert_str_eq(cJSON_GetObjectItem(x, "course")->valuestring, "figure8");
    ck_assert_str_eq(cJSON_GetObjectItem(x, "end")->valuestring, "tip-over");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(x, "ended")));
    ck_assert(cJSON_IsFalse(cJSON_GetObjectItem(x, "under_way")));
    ck_assert_double_eq_tol(num(x, "rep_elapsed_s"), 12.345, 1e-9);
    ck_assert_double_eq(num(x, "repetitions"), 10);
    ck_assert_double_eq(num(x, "rep"), 4);
    ck_assert_double_eq(num(x, "successes"), 3);
    ck_assert_double_eq(num(x, "limit_s"), 600);
    ck_assert_double_eq(num(x, "left_s"), 12);
    const cJSON *k = cJSON_GetObjectItem(x, "by_kind");
    ck_assert_double_eq(num(k, "tip_over"), 1);
    ck_assert_double_eq(num(k, "assist"), 1);
    ck_assert_double_eq(num(k, "wall"), 0);
    cJSON_Delete(o);

    t.limit_ms = 0;
    n = kn_vjson_trial(out, sizeof out, 3, &t);
    o = cJSON_ParseWithLength(out, n);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "trial"), "limit_s")));
    cJSON_Delete(o);

    n = kn_vjson_trial(out, sizeof out, 0, NULL);
    ck_assert_str_eq(out, "{\"type\":\"trial\",\"robot\":0,\"trial\":null}");
    ck_assert_uint_eq(n, strlen(out));
    ck_assert_uint_eq(kn_vjson_trial(out, 8, 0, &t), 0); /* too small: nothing */
}
END_TEST

START_TEST(page_messages)
{
    const char *rep = "{\"type\":\"report\",\"fps\":60}";
    ck_assert_int_eq(kn_vjson_classify(rep, strlen(rep)), KN_VJSON_REPORT);
    ck_assert_int_eq(kn_vjson_classify("{\"type\":\"crawler\"}", 18), KN_VJSON_BAD_TYPE);
    ck_assert_int_eq(kn_vjson_classify("{\"type\":7}", 10), KN_VJSON_BAD_TYPE);
    ck_assert_int_eq(kn_vjson_classify("{}", 2), KN_VJSON_BAD_TYPE);
    ck_assert_int_eq(kn_vjson_classify("[1,2]", 5), KN_VJSON_BAD_JSON);
    ck_assert_int_eq(kn_vjson_classify("{\"type\":", 8), KN_VJSON_BAD_JSON);
    ck_assert_int_eq(kn_vjson_classify("", 0), KN_VJSON_BAD_JSON);
    /* not NUL-terminated: only len bytes are read */
    char cut[8] = { '{', '}', 'x', 'x', 'x', 'x', 'x', 'x' };
    ck_assert_int_eq(kn_vjson_classify(cut, 2), KN_VJSON_BAD_TYPE);
}
END_TEST

static enum kn_vfiles_kind map(const char *uri, char *path, const char **dir)
{
    const char *mime = NULL;
    return kn_vfiles_map(uri, "/w", "/t", path, PATH_MAX, dir, &mime);
}

START_TEST(http_paths)
{
    char path[PATH_MAX];
    const char *dir = NULL, *mime = NULL;
    ck_assert_int_eq(kn_vfiles_map("/", "/w", "/t", path, sizeof path, &dir, &mime),
                     KN_VFILES_FILE);
    ck_assert_str_eq(path, "/w/index.html");
    ck_assert_str_eq(dir, "/w");
    ck_assert_str_eq(mime, "text/html; charset=utf-8");
    ck_assert_int_eq(kn_vfiles_map("/app/main.js", "/w", "/t", path, sizeof path, &dir, &mime),
                     KN_VFILES_FILE);
    ck_assert_str_eq(path, "/w/main.js");
    ck_assert_str_eq(mime, "text/javascript; charset=utf-8");
    ck_assert_int_eq(map("/three/build/three.module.js", path, &dir), KN_VFILES_FILE);
    ck_assert_str_eq(path, "/t/build/three.module.js");
    ck_assert_str_eq(dir, "/t");
    ck_assert_int_eq(map("/api/robots", path, &dir), KN_VFILES_ROBOTS);
    ck_assert_int_eq(map("/api/stats", path, &dir), KN_VFILES_STATS);
    ck_assert_str_eq(kn_vfiles_mime("a/view.css"), "text/css; charset=utf-8");
    ck_assert_str_eq(kn_vfiles_mime("x.bin"), "application/octet-stream");
    static const char *const absent[] = {
        "/main.js", "/api",       "/api/",        "/ws", "/app",       "/app/",
        "/three/",  "/apps/x.js", "/favicon.ico", "",    "/index.htm",
    };
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        ck_assert_msg(map(absent[i], path, &dir) == KN_VFILES_NOT_FOUND, "%s", absent[i]);
    static const char *const refused[] = {
        "/app/../etc/passwd", "/app/..",      "/app/a/../../x", "/three/./x.js", "/app/.hidden",
        "/app/a//b.js",       "/app/a\\b.js", "/app/a\x01.js",  "/app/x/",       "/../etc/passwd",
        "/app/a/.git/config", "/three/..%2f",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        ck_assert_msg(map(refused[i], path, &dir) == KN_VFILES_REFUSED, "%s", refused[i]);
}
END_TEST

/* Symlinks are followed only while they stay in their folder. */
START_TEST(symlinks_stay_inside)
{
    char base[] = "/tmp/kn-vfiles-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(base));
    char dir[PATH_MAX], sub[PATH_MAX], file[PATH_MAX], in_link[PATH_MAX], out_link[PATH_MAX],
        outside[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/three", base);
    snprintf(sub, sizeof sub, "%s/three/build", base);
    snprintf(file, sizeof file, "%s/three/three.module.js", base);
    snprintf(in_link, sizeof in_link, "%s/three/build/three.module.js", base);
    snprintf(outside, sizeof outside, "%s/secret.txt", base);
    snprintf(out_link, sizeof out_link, "%s/three/build/secret.js", base);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    FILE *f = fopen(file, "w");
    fputs("x", f);
    fclose(f);
    f = fopen(outside, "w");
    fputs("s", f);
    fclose(f);
    ck_assert_int_eq(symlink("../three.module.js", in_link), 0);
    ck_assert_int_eq(symlink("../../secret.txt", out_link), 0);
    ck_assert(kn_vfiles_inside(dir, file));
    ck_assert(kn_vfiles_inside(dir, in_link));
    ck_assert(!kn_vfiles_inside(dir, out_link));
    ck_assert(!kn_vfiles_inside(dir, sub)); /* a folder is not served */
    ck_assert(!kn_vfiles_inside(dir, outside));
    ck_assert(!kn_vfiles_inside(sub, file)); /* ../ of the folder */
    unlink(in_link);
    unlink(out_link);
    unlink(file);
    unlink(outside);
    rmdir(sub);
    rmdir(dir);
    rmdir(base);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("view-json");
    TCase *t = tcase_create("messages");
    tcase_add_test(t, state_units);
    tcase_add_test(t, hello_link_world);
    tcase_add_test(t, page_messages);
    tcase_add_test(t, trial_message);
    suite_add_tcase(s, t);
    TCase *h = tcase_create("http");
    tcase_add_test(h, http_paths);
    tcase_add_test(h, symlinks_stay_inside);
    suite_add_tcase(s, h);
    return h_run_suite(s);
}
