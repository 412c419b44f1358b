/* Unit tests of the sweep file's parser and expansion (tools/sweep): the
 * product's order, ranges and their rounding, canonical strings, ids and
 * the hash, seeded sampling without replacement and uniform draws,
 * shards, and every refusal with its message. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "sweep.h"

static void parse_ok(const char *text, struct kn_sweep *sw)
{
    char err[1024] = "";
    int rc = kn_sweep_parse(text, strlen(text), sw, err, sizeof err);
    ck_assert_msg(rc == 0, "refused: %s", err);
    rc = kn_sweep_expand(sw, err, sizeof err);
    ck_assert_msg(rc == 0, "not expanded: %s", err);
}

/* Parsing or expanding (or, with terrain, the terrain check) fails with
 * a message holding want. */
static void refused(const char *text, const char *terrain, const char *want)
{
    struct kn_sweep sw;
    char err[1024] = "";
    int rc = kn_sweep_parse(text, strlen(text), &sw, err, sizeof err);
    if (rc == 0 && terrain)
        rc = kn_sweep_check_terrain(&sw, terrain, err, sizeof err);
    if (rc == 0)
        rc = kn_sweep_expand(&sw, err, sizeof err);
    kn_sweep_free(&sw);
    ck_assert_msg(rc == -1, "accepted: %s", text);
    ck_assert_msg(strstr(err, want) != NULL, "message \"%s\" lacks \"%s\"", err, want);
}

#define HEAD "{\"name\": \"t\", \"scenario\": \"s.json\", "

START_TEST(product_order)
{
    struct kn_sweep sw;
    parse_ok(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, \"step\": "
                  "0.1}, \"start_yaw_deg\": [-5, 0, 5]}}",
             &sw);
    ck_assert_uint_eq(sw.ncases, 9);
    ck_assert_int_eq(sw.nparams, 2);
    /* the last parameter varies fastest; range values rounded to the step */
    char canon[256];
    kn_sweep_canonical(&sw, &sw.cases[0], canon, sizeof canon);
    ck_assert_str_eq(canon, "step_height_m=0.1;start_yaw_deg=-5");
    kn_sweep_canonical(&sw, &sw.cases[1], canon, sizeof canon);
    ck_assert_str_eq(canon, "step_height_m=0.1;start_yaw_deg=0");
    kn_sweep_canonical(&sw, &sw.cases[8], canon, sizeof canon);
    ck_assert_str_eq(canon, "step_height_m=0.3;start_yaw_deg=5");
    /* 0.1 + 2 * 0.1 is 0.30000000000000004 in binary: rounded */
    ck_assert(sw.cases[8].v[0] == 0.3);
    ck_assert_int_eq(sw.params[0].harder, 1);
    ck_assert_int_eq(sw.params[1].harder, 0);
    ck_assert(fabs(sw.target_rate - 0.95) < 1e-12);
    ck_assert_int_eq(sw.max_cases, KN_SWEEP_DEFAULT_MAX_CASES);
    kn_sweep_free(&sw);
}
END_TEST

START_TEST(ids_and_hash)
{
    struct kn_sweep sw;
    parse_ok(HEAD "\"parameters\": {\"step_height_m\": [0.2]}}", &sw);
    /* FNV-1a 64 of "step_height_m=0.2", its first 10 hex digits */
    const char *c = "step_height_m=0.2";
    uint64_t h = KN_SWEEP_FNV_INIT;
    for (const char *p = c; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 0x100000001b3ull;
    }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    hex[10] = '\0';
    ck_assert_str_eq(sw.cases[0].id, hex);
    /* the FNV-1a reference value of "a" */
    ck_assert_uint_eq(kn_sweep_fnv(KN_SWEEP_FNV_INIT, "a", 1), 0xaf63dc4c8601ec8cull);
    /* the hash covers the scenario's bytes */
    uint64_t h1 = kn_sweep_hash(&sw, "{}", 2), h2 = kn_sweep_hash(&sw, "{ }", 3);
    ck_assert(h1 != h2);
    ck_assert(h1 == kn_sweep_hash(&sw, "{}", 2));
    kn_sweep_free(&sw);
    /* and the cases */
    parse_ok(HEAD "\"parameters\": {\"step_height_m\": [0.21]}}", &sw);
    ck_assert(h1 != kn_sweep_hash(&sw, "{}", 2));
    kn_sweep_free(&sw);
}
END_TEST

START_TEST(canonical_numbers)
{
    struct kn_sweep sw;
    parse_ok(HEAD "\"parameters\": {\"start_dx_m\": [-0.0, 0.1234567891234, 123456.789],"
                  " \"terrain_family\": [\"rough\"], \"seed\": [7]}, \"harder\": {}}",
             &sw);
    char canon[256];
    kn_sweep_canonical(&sw, &sw.cases[0], canon, sizeof canon);
    /* no "-0" */
    ck_assert_str_eq(canon, "start_dx_m=0;terrain_family=rough;seed=7");
    kn_sweep_canonical(&sw, &sw.cases[1], canon, sizeof canon);
    ck_assert_str_eq(canon, "start_dx_m=0.123456789;terrain_family=rough;seed=7");
    kn_sweep_canonical(&sw, &sw.cases[2], canon, sizeof canon);
    ck_assert_str_eq(canon, "start_dx_m=123456.789;terrain_family=rough;seed=7");
    kn_sweep_free(&sw);
}
END_TEST

START_TEST(id_collision)
{
    /* two values that are one in the canonical string (-0 and 1e-10
     * round to 0) are refused before they could collide */
    refused(HEAD "\"parameters\": {\"start_dx_m\": [-0.0, 1e-10]}}", NULL, "listed twice");
    refused(HEAD "\"parameters\": {\"start_dx_m\": [0.1000000001, 0.10000000012]}}", NULL,
            "listed twice");
}
END_TEST

static void ids_of(const char *text, char (*ids)[KN_SWEEP_ID_LEN + 1], size_t *n)
{
    struct kn_sweep sw;
    parse_ok(text, &sw);
    *n = sw.ncases;
    for (size_t i = 0; i < sw.ncases; i++)
        memcpy(ids[i], sw.cases[i].id, sizeof ids[i]);
    kn_sweep_free(&sw);
}

START_TEST(sample_deterministic)
{
    const char *f = HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, "
                         "\"step\": 0.01}, \"seed\": {\"from\": 1, \"to\": 10, \"step\": 1}}, "
                         "\"sample\": {\"cases\": 50, \"seed\": 7}}";
    static char a[64][KN_SWEEP_ID_LEN + 1], b[64][KN_SWEEP_ID_LEN + 1];
    size_t na, nb;
    ids_of(f, a, &na);
    ids_of(f, b, &nb);
    ck_assert_uint_eq(na, 50);
    ck_assert_uint_eq(nb, 50);
    ck_assert(memcmp(a, b, sizeof a) == 0);
    /* distinct, and a subset of the product in its order */
    struct kn_sweep full, s;
    parse_ok(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, "
                  "\"step\": 0.01}, \"seed\": {\"from\": 1, \"to\": 10, \"step\": 1}}}",
             &full);
    parse_ok(f, &s);
    ck_assert_uint_eq(full.ncases, 210);
    size_t j = 0;
    for (size_t i = 0; i < s.ncases; i++) {
        while (j < full.ncases && strcmp(full.cases[j].id, s.cases[i].id) != 0)
            j++;
        ck_assert_msg(j < full.ncases, "case %zu not in the product's order", i);
        j++;
    }
    kn_sweep_free(&full);
    kn_sweep_free(&s);
    /* another seed, other cases */
    ids_of(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, \"step\": "
                "0.01}, \"seed\": {\"from\": 1, \"to\": 10, \"step\": 1}}, \"sample\": "
                "{\"cases\": 50, \"seed\": 8}}",
           b, &nb);
    ck_assert(memcmp(a, b, sizeof a) != 0);
}
END_TEST

START_TEST(sample_all)
{
    /* as many cases as the product: every one of them, once */
    struct kn_sweep sw;
    parse_ok(HEAD "\"parameters\": {\"start_yaw_deg\": [1, 2, 3, 4, 5]}, \"sample\": "
                  "{\"cases\": 5}}",
             &sw);
    ck_assert_uint_eq(sw.ncases, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert(sw.cases[i].v[0] == (double)(i + 1));
    kn_sweep_free(&sw);
}
END_TEST

START_TEST(uniform_draws)
{
    struct kn_sweep sw;
    parse_ok(HEAD "\"parameters\": {\"friction\": {\"uniform\": [0.4, 0.9]}, \"seed\": [1, 2]},"
                  " \"sample\": {\"cases\": 30, \"seed\": 3}}",
             &sw);
    ck_assert_uint_eq(sw.ncases, 30);
    ck_assert(sw.params[0].uniform);
    for (size_t i = 0; i < sw.ncases; i++) {
        ck_assert(sw.cases[i].v[0] >= 0.4 && sw.cases[i].v[0] <= 0.9);
        ck_assert(sw.cases[i].v[0] == kn_sweep_round9(sw.cases[i].v[0]));
        /* the discrete part in the product's order */
        if (i)
            ck_assert(sw.cases[i].v[1] >= sw.cases[i - 1].v[1]);
    }
    kn_sweep_free(&sw);
}
END_TEST

START_TEST(rng_reference)
{
    /* splitmix64's published first output for seed 0 */
    struct kn_sweep_rng r;
    kn_sweep_rng_seed(&r, 0);
    ck_assert_uint_eq(kn_sweep_rng_next(&r), 0xe220a8397b1dcdafull);
    uint64_t out[100];
    kn_sweep_rng_seed(&r, 5);
    ck_assert_int_eq(kn_sweep_sample_distinct(&r, 100, 100, out), 0);
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(out[i], (uint64_t)i);
    kn_sweep_rng_seed(&r, 5);
    ck_assert_int_eq(kn_sweep_sample_distinct(&r, 1000000000000ull, 64, out), 0);
    for (int i = 1; i < 64; i++)
        ck_assert(out[i] > out[i - 1]);
}
END_TEST

START_TEST(shards)
{
    int k = 0, n = 0;
    char err[200];
    ck_assert_int_eq(kn_sweep_shard_parse("2/4", &k, &n, err, sizeof err), 0);
    ck_assert_int_eq(k, 2);
    ck_assert_int_eq(n, 4);
    const char *badv[] = { "3/2", "0/2", "x/y", "2", "1/0", "/2", "1/", "-1/2", "1/2/3" };
    for (size_t i = 0; i < sizeof badv / sizeof badv[0]; i++) {
        ck_assert_msg(kn_sweep_shard_parse(badv[i], &k, &n, err, sizeof err) == -1, "%s", badv[i]);
        ck_assert(strstr(err, "--shard") != NULL);
    }
    /* every case in exactly one shard */
    for (size_t i = 0; i < 40; i++) {
        int in = 0;
        for (int s = 1; s <= 4; s++)
            in += kn_sweep_in_shard(i, s, 4);
        ck_assert_int_eq(in, 1);
        ck_assert(kn_sweep_in_shard(i, (int)(i % 4) + 1, 4));
    }
}
END_TEST

START_TEST(terrain_fit)
{
    struct kn_sweep sw;
    char err[400];
    parse_ok(HEAD "\"parameters\": {\"step_height_m\": [0.1], \"friction\": [0.5]}}", &sw);
    ck_assert_int_eq(kn_sweep_check_terrain(&sw, "step", err, sizeof err), 0);
    ck_assert_int_eq(kn_sweep_check_terrain(&sw, "trench", err, sizeof err), -1);
    ck_assert_str_eq(err, "parameter step_height_m does not fit the scenario's terrain (trench): "
                          "it changes a step");
    kn_sweep_free(&sw);
    parse_ok(HEAD "\"parameters\": {\"terrain_family\": [\"rough\", \"rubble\"], "
                  "\"terrain_seed\": [1, 2, 3]}}",
             &sw);
    ck_assert_uint_eq(sw.ncases, 6);
    ck_assert_int_eq(kn_sweep_check_terrain(&sw, "step", err, sizeof err), 0);
    kn_sweep_free(&sw);
    refused(HEAD "\"parameters\": {\"terrain_family\": [\"rough\"], \"step_height_m\": [0.1]}}",
            "step", "does not fit");
    refused(HEAD "\"parameters\": {\"terrain_seed\": [1]}}", "step", "does not fit");
    refused(HEAD "\"parameters\": {\"stair_run_m\": [0.3]}}", "ramp", "does not fit");
}
END_TEST

START_TEST(refusals)
{
    refused(HEAD "\"parameters\": {\"step_height_m\": [0.1]}, \"typo\": 1}", NULL,
            "unknown key \"typo\"");
    refused(HEAD "\"parameters\": {\"step_hieght_m\": [0.1]}}", NULL,
            "unknown parameter \"step_hieght_m\"");
    refused(HEAD "\"parameters\": {\"step_height_m\": []}}", NULL, "the list is empty");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.3, \"to\": 0.1, \"step\": "
                 "0.01}}}",
            NULL, "empty range");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, \"step\": "
                 "0}}}",
            NULL, "empty range");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3}}}", NULL,
            "a range is");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0.1, \"to\": 0.3, \"step\": "
                 "0.01, \"by\": 1}}}",
            NULL, "unknown key \"by\"");
    refused(HEAD "\"parameters\": {}}", NULL, "at least one parameter");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0, \"to\": 1, \"step\": "
                 "0.001}, \"seed\": {\"from\": 1, \"to\": 20, \"step\": 1}}, \"max_cases\": "
                 "5000}",
            NULL, "20020 cases, more than max_cases 5000");
    refused(HEAD "\"parameters\": {\"step_height_m\": {\"from\": 0, \"to\": 1, \"step\": "
                 "0.0001}}}",
            NULL, "more than max_cases 10000");
    refused(HEAD "\"parameters\": {\"friction\": {\"uniform\": [0.2, 0.8]}}}", NULL,
            "uniform draws need \"sample\"");
    refused(HEAD "\"parameters\": {\"step_height_m\": [0.1, 0.2]}, \"sample\": {\"cases\": 3}}",
            NULL, "sample.cases 3 is more than the 2 cases");
    refused(HEAD "\"parameters\": {\"seed\": [1.5]}}", NULL, "integers");
    refused(HEAD "\"parameters\": {\"terrain_family\": [\"hills\"]}}", NULL,
            "rough, stepfield or rubble");
    refused(HEAD "\"parameters\": {\"step_height_m\": [0.1]}, \"harder\": {\"friction\": "
                 "\"lower\"}}",
            NULL, "not a parameter of this sweep");
    refused(HEAD "\"parameters\": {\"step_height_m\": [0.1]}, \"harder\": {\"step_height_m\": "
                 "\"up\"}}",
            NULL, "\"higher\" or \"lower\"");
    refused(HEAD "\"parameters\": {\"step_height_m\": [0.1]}, \"target_rate\": 1.5}", NULL,
            "target_rate");
    refused("{\"name\": \"../x\", \"scenario\": \"s.json\", \"parameters\": "
            "{\"seed\": [1]}}",
            NULL, "\"name\" must be");
    refused("{\"name\": \"x\", \"scenario\": \"s.json#a\", \"parameters\": {\"seed\": [1]}}", NULL,
            "variant");
    refused("{\"name\": \"x\", \"scenario\": \"s.json\", \"parameters\": ", NULL, "not JSON");
    refused("[1]", NULL, "one JSON object");
    /* a line break in a quoted key does not break the reason's line */
    refused(HEAD "\"parameters\": {\"seed\": [1]}, \"a\\nb\": 1}", NULL, "unknown key \"a b\"");
}
END_TEST

START_TEST(harder_and_variant)
{
    struct kn_sweep sw;
    parse_ok("{\"name\": \"x\", \"scenario\": \"../a/s.json#2\", \"parameters\": "
             "{\"friction\": [0.5, 0.7], \"stair_run_m\": [0.25]}, \"harder\": {\"friction\": "
             "\"higher\"}, \"max_cases\": 2, \"target_rate\": 0.9}",
             &sw);
    ck_assert_str_eq(sw.scenario, "../a/s.json");
    ck_assert_int_eq(sw.variant, 2);
    ck_assert_int_eq(sw.params[0].harder, 1); /* the file's over the default (lower) */
    ck_assert_int_eq(sw.params[1].harder, -1);
    ck_assert_uint_eq(sw.ncases, 2);
    kn_sweep_set_sample(&sw, 1);
    char err[200];
    ck_assert_int_eq(kn_sweep_expand(&sw, err, sizeof err), 0);
    ck_assert_uint_eq(sw.ncases, 1);
    kn_sweep_free(&sw);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sweep-file");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, product_order);
    tcase_add_test(tc, ids_and_hash);
    tcase_add_test(tc, canonical_numbers);
    tcase_add_test(tc, id_collision);
    tcase_add_test(tc, sample_deterministic);
    tcase_add_test(tc, sample_all);
    tcase_add_test(tc, uniform_draws);
    tcase_add_test(tc, rng_reference);
    tcase_add_test(tc, shards);
    tcase_add_test(tc, terrain_fit);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, harder_and_variant);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
