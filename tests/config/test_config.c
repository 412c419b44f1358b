/* Unit tests of the kenaf-simd configuration: the shipped config and
 * examples load and round-trip, the schema and the loader agree (defaults
 * included), every bad file in bad/ fails with the expected message, and
 * no input (huge, deep, binary, unterminated, random) crashes the loader. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "harness_suite.h"
#include "jsonschema.h"
#include "sockdir.h"

#define SRC KN_SOURCE_ROOT
#define DEFAULT_CONFIG SRC "/config/kenaf-simd.json"
#define SCHEMA_FILE SRC "/config/kenaf-simd.schema.json"
#define EXAMPLES_DIR SRC "/config/examples"
#define BAD_DIR SRC "/tests/config/bad"
#define SCHEMAS_DIR SRC "/tests/config/schemas"

static char err[16384];

/* ---- helpers ----------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

static struct kn_config *load_ok(const char *path)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_ptr_nonnull(cfg);
    int rc = kn_config_load(path, NULL, cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "%s should load, got:\n%s", path, err);
    ck_assert_str_eq(err, "");
    return cfg;
}

static struct kn_config *parse_ok(const char *text, const char *name)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_ptr_nonnull(cfg);
    int rc = kn_config_parse(text, strlen(text), name, NULL, cfg, err, sizeof err);
    ck_assert_msg(rc == 0, "%s should load, got:\n%s\n--- text:\n%s", name, err, text);
    return cfg;
}

/* Parses and expects failure with every substring in the NULL-ended list. */
static void parse_fails(const char *text, const char *const *want)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_ptr_nonnull(cfg);
    int rc = kn_config_parse(text, strlen(text), "t.json", NULL, cfg, err, sizeof err);
    ck_assert_msg(rc == -1, "should fail:\n%s", text);
    for (; *want; want++)
        ck_assert_msg(strstr(err, *want) != NULL, "expected \"%s\" in:\n%s", *want, err);
    free(cfg);
}

static void fails_with(const char *text, const char *want)
{
    const char *const list[] = { want, NULL };
    parse_fails(text, list);
}

/* One robot on the given backend JSON and listen address. */
static void robot_json(char *buf, size_t len, const char *listen, const char *backend)
{
    snprintf(buf, len, "{\"robots\": [{\"name\": \"r\", \"listen\": \"%s\", \"backend\": %s}]}",
             listen, backend);
}

static cJSON *embedded_schema(void)
{
    size_t len = 0;
    const char *text = kn_config_schema_text(&len);
    cJSON *s = cJSON_ParseWithLength(text, len);
    ck_assert_ptr_nonnull(s);
    return s;
}

struct collected {
    size_t n;
    char text[8192];
};

static void collect(void *ctx, const char *path, const char *message)
{
    struct collected *c = ctx;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s: %s\n", path, message);
    c->n++;
}

static size_t validate_text(const cJSON *schema, const char *json, struct collected *out)
{
    memset(out, 0, sizeof *out);
    cJSON *doc = cJSON_Parse(json);
    ck_assert_msg(doc != NULL, "test JSON does not parse: %s", json);
    size_t n = kn_jsonschema_validate(schema, doc, 100, collect, out);
    cJSON_Delete(doc);
    ck_assert_uint_eq(n, out->n);
    return n;
}

static void assert_configs_equal(const struct kn_config *a, const struct kn_config *b)
{
    ck_assert_int_eq(a->log_level, b->log_level);
    ck_assert_str_eq(a->stats_socket, b->stats_socket);
    ck_assert_uint_eq(a->n_robots, b->n_robots);
    for (size_t i = 0; i < a->n_robots; i++)
        ck_assert_msg(kn_config_robot_equal(&a->robots[i], &b->robots[i]), "robot %zu differs", i);
}

/* Names of the *.json files in dir, sorted; returns the count. */
static size_t list_json(const char *dir, char names[][128], size_t max)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 5 && strcmp(de->d_name + l - 5, ".json") == 0 && n < max)
            snprintf(names[n++], 128, "%s", de->d_name);
    }
    closedir(d);
    qsort(names, n, 128, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* ---- shipped files ----------------------------------------------------- */

START_TEST(default_config_loads)
{
    struct kn_config *c = load_ok(DEFAULT_CONFIG);
    ck_assert_str_eq(c->source, DEFAULT_CONFIG);
    ck_assert_int_eq(c->log_level, KN_LOG_INFO);
    char def[KN_CFG_PATH_LEN];
    ck_assert_int_eq(kn_sockdir_default(def, sizeof def), 0);
    ck_assert_str_eq(c->stats_socket, def); /* no "stats_socket": the default */
    ck_assert(c->stats_socket_default);
    ck_assert_uint_eq(c->n_robots, 1);
    const struct kn_cfg_robot *r = &c->robots[0];
    ck_assert_str_eq(r->name, "kenaf");
    ck_assert_str_eq(r->bind_host, "127.0.0.1");
    ck_assert_uint_eq(r->port, 9750);
    ck_assert_double_eq(r->watchdog_ms, 500);
    ck_assert_int_eq(r->max_speed_mm_s, 800);
    ck_assert_int_eq(r->flipper_min_cdeg, -11950);
    ck_assert_int_eq(r->flipper_max_cdeg, 11950);
    ck_assert_int_eq(r->counts_per_m, 4000);
    ck_assert_double_eq(r->battery_v, 24.0);
    const struct kn_cfg_backend *b = &r->backend;
    ck_assert_int_eq(b->kind, KN_BACKEND_ENGINE);
    ck_assert_str_eq(b->host, ""); /* spawned */
    ck_assert_uint_eq(b->port, 0);
    ck_assert_double_eq(b->connect_timeout_s, 1.0);
    ck_assert_double_eq(b->reconnect_max_s, 1.0);
    ck_assert_double_eq(b->stale_ms, 500);
    ck_assert_double_eq(b->wheel_radius_m, 0.08);
    ck_assert_double_eq(b->counts_per_tick, 1.0);
    ck_assert_str_eq(b->flipper[KN_FL].name, "FLFlipper");
    ck_assert_str_eq(b->flipper[KN_RR].name, "RRFlipper");
    ck_assert_double_eq(b->flipper[KN_FL].sign, -1.0);
    ck_assert_double_eq(b->flipper[KN_FR].sign, -1.0);
    ck_assert_double_eq(b->flipper[KN_RL].sign, 1.0);
    ck_assert_double_eq(b->flipper[KN_RR].sign, 1.0);
    ck_assert_int_eq(b->dialect, KN_USARSIM_UDK);
    ck_assert_str_eq(b->class_name, "USARBot.Kenaf");
    ck_assert_str_eq(b->terrain, "flat");
    ck_assert_str_eq(b->engine_path, "");
    ck_assert_str_eq(b->robot, "kenaf");
    free(c);
}
END_TEST

START_TEST(examples_load_and_validate)
{
    char names[32][128];
    size_t n = list_json(EXAMPLES_DIR, names, 32);
    ck_assert_uint_ge(n, 2);
    cJSON *schema = embedded_schema();
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", EXAMPLES_DIR, names[i]);
        free(load_ok(path));
        /* the schema alone accepts it too: the validator and the loader agree */
        char *text = slurp(path, NULL);
        struct collected got;
        ck_assert_msg(validate_text(schema, text, &got) == 0, "%s: %s", path, got.text);
        free(text);
    }
    cJSON_Delete(schema);
}
END_TEST

START_TEST(example_values)
{
    struct kn_config *u = load_ok(EXAMPLES_DIR "/usarsim.json");
    const struct kn_cfg_backend *b = &u->robots[0].backend;
    ck_assert_int_eq(b->kind, KN_BACKEND_USARSIM);
    ck_assert_str_eq(b->host, "192.168.10.20");
    ck_assert_uint_eq(b->port, 3000);
    ck_assert_double_eq(b->connect_timeout_s, 2.0);
    ck_assert_double_eq(b->spawn_location_m[0], 4.5);
    ck_assert_double_eq(b->spawn_location_m[2], 0.3);
    ck_assert_double_eq_tol(b->spawn_rpy_rad[2], M_PI / 2, 1e-12);
    ck_assert_str_eq(u->robots[0].bind_host, "0.0.0.0");
    free(u);

    struct kn_config *m = load_ok(EXAMPLES_DIR "/multi-robot.json");
    ck_assert_uint_eq(m->n_robots, 3);
    ck_assert_str_eq(m->robots[0].backend.terrain, "stairs");
    const struct kn_cfg_robot *bravo = &m->robots[1], *charlie = &m->robots[2];
    ck_assert_str_eq(bravo->backend.host, "localhost");
    ck_assert_uint_eq(bravo->backend.port, 3000);
    ck_assert_int_eq(bravo->backend.dialect, KN_USARSIM_UT2004);
    ck_assert_str_eq(bravo->backend.start_tag, "PlayerStart1");
    ck_assert_str_eq(charlie->bind_host, "::1");
    ck_assert_uint_eq(charlie->port, 9752);
    ck_assert_double_eq(charlie->watchdog_ms, 300);
    ck_assert_int_eq(charlie->max_speed_mm_s, 500);
    ck_assert_int_eq(charlie->backend.kind, KN_BACKEND_GAZEBO);
    ck_assert_uint_eq(charlie->backend.port, 11345);
    ck_assert_str_eq(charlie->backend.flipper[KN_RL].name, "kenaf::rear_left_flipper_j");
    ck_assert(charlie->backend.twist_cmd);
    ck_assert_str_eq(charlie->backend.model, "kenaf");
    free(m);
}
END_TEST

START_TEST(embedded_schema_is_the_file)
{
    size_t flen, elen;
    char *file = slurp(SCHEMA_FILE, &flen);
    const char *emb = kn_config_schema_text(&elen);
    ck_assert_uint_eq(flen, elen);
    ck_assert(memcmp(file, emb, flen) == 0);
    ck_assert_int_eq(emb[elen], '\0');
    free(file);
    /* and it passes the validator's own schema check */
    cJSON *schema = embedded_schema();
    struct collected got = { 0 };
    ck_assert_msg(kn_jsonschema_check(schema, collect, &got) == 0, "%s", got.text);
    cJSON_Delete(schema);
}
END_TEST

/* ---- round trip -------------------------------------------------------- */

static void round_trip(const char *path)
{
    struct kn_config *a = load_ok(path);
    char *text = kn_config_to_json(a);
    ck_assert_ptr_nonnull(text);
    cJSON *schema = embedded_schema();
    struct collected got;
    ck_assert_msg(validate_text(schema, text, &got) == 0, "%s output invalid: %s\n%s", path,
                  got.text, text);
    cJSON_Delete(schema);
    struct kn_config *b = parse_ok(text, "round-trip");
    assert_configs_equal(a, b);
    char *again = kn_config_to_json(b);
    ck_assert_str_eq(text, again); /* a fixed point */
    free(text);
    free(again);
    free(a);
    free(b);
}

START_TEST(round_trip_shipped)
{
    round_trip(DEFAULT_CONFIG);
    char names[32][128];
    size_t n = list_json(EXAMPLES_DIR, names, 32);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", EXAMPLES_DIR, names[i]);
        round_trip(path);
    }
}
END_TEST

START_TEST(round_trip_unusual_values)
{
    const char *text =
        "{\"log_level\": \"debug\", \"stats_socket\": \"/tmp/s.sock\", \"robots\": ["
        "{\"name\": \"a.b_c-1\", \"listen\": \"[::]:0\", \"watchdog_ms\": 123.456,"
        " \"counts_per_m\": 10000000, \"battery_v\": 0.1,"
        " \"limits\": {\"max_speed_mm_s\": 1, \"flipper_min_deg\": -0.01, \"flipper_max_deg\": 0.01},"
        " \"backend\": {\"type\": \"engine\", \"address\": \"[fe80::1]:4000\","
        "  \"connect_timeout_s\": 0.001, \"reconnect_max_s\": 0.05, \"stale_ms\": 10,"
        "  \"wheel_radius_m\": 0.1234567890123, \"counts_per_tick\": 1e-6,"
        "  \"flippers\": {\"FR\": {\"joint\": \"a::b/c\", \"sign\": 1, \"offset_deg\": -12.34}},"
        "  \"usarsim\": {\"dialect\": \"ut2004\", \"class_name\": \"USARBot.kenaf\", \"start\": \"P-1\","
        "   \"location_m\": [-1e5, 0.000001, 99999.5], \"rotation_deg\": [359.99, -360, 0.01],"
        "   \"encoder_sign\": [1, -1]}}},"
        "{\"name\": \"g\", \"listen\": \"[::]:0\", \"backend\": {\"type\": \"gazebo\", \"address\": \"sim.example\","
        "  \"flippers\": {\"RL\": {\"joint\": \"rl_hinge\", \"link\": \"m2::rl_arm\"}},"
        "  \"gazebo\": {\"command\": \"pose\", \"model\": \"m\", \"tracks_separation_m\": 10,"
        "  \"steering_efficiency\": 1, \"max_linear_speed_m_s\": 0.001, \"max_angular_speed_rad_s\": 100}}},"
        "{\"name\": \"s\", \"listen\": \"127.0.0.1:1\", \"backend\": {\"type\": \"standin\","
        "  \"address\": \"127.0.0.1:65535\"}}]}";
    struct kn_config *a = parse_ok(text, "unusual");
    ck_assert_int_eq(a->robots[0].flipper_min_cdeg, -1);
    ck_assert(a->robots[0].backend.encoder_sign[0] == 1);
    ck_assert(a->robots[0].backend.encoder_sign[1] == -1);
    ck_assert(a->robots[1].backend.encoder_sign[1] == 1); /* default */
    ck_assert_double_eq_tol(a->robots[0].backend.flipper[KN_FR].offset_rad, -12.34 * M_PI / 180,
                            1e-12);
    ck_assert(!a->robots[1].backend.twist_cmd);
    ck_assert_uint_eq(a->robots[1].backend.port, 11345);
    ck_assert(a->robots[1].backend.max_linear_speed_m_s == 0.001);
    ck_assert(a->robots[1].backend.max_angular_speed_rad_s == 100);
    ck_assert_str_eq(a->robots[1].backend.flipper[KN_RL].link, "m2::rl_arm");
    ck_assert_str_eq(a->robots[1].backend.flipper[KN_FL].link, "");
    char *out = kn_config_to_json(a);
    struct kn_config *b = parse_ok(out, "unusual-2");
    assert_configs_equal(a, b);
    free(out);
    free(a);
    free(b);
}
END_TEST

/* ---- schema defaults == loader defaults -------------------------------- */

struct seen {
    char paths[128][160];
    size_t n;
};

static void seen_add(struct seen *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->paths[i], path) == 0)
            return;
    ck_assert_uint_lt(s->n, 128);
    snprintf(s->paths[s->n++], 160, "%s", path);
}

/* Walks the schema; each "default" must equal the effective value at the
 * same place (array items: the first element). */
static void compare_defaults(const cJSON *schema, const cJSON *eff, const char *path,
                             struct seen *s, bool record_only)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties");
    const cJSON *p;
    cJSON_ArrayForEach(p, props)
    {
        char sub[160];
        snprintf(sub, sizeof sub, "%s.%s", path, p->string);
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(p, "default");
        const cJSON *val = eff ? cJSON_GetObjectItemCaseSensitive(eff, p->string) : NULL;
        if (def != NULL) {
            if (record_only) {
                seen_add(s, sub);
            } else if (val != NULL) {
                char *d = cJSON_PrintUnformatted(def), *v = cJSON_PrintUnformatted(val);
                ck_assert_msg(cJSON_Compare(def, val, true), "%s: schema default %s, loader %s",
                              sub, d, v);
                cJSON_free(d);
                cJSON_free(v);
                seen_add(s, sub);
            }
        }
        const cJSON *items = cJSON_GetObjectItemCaseSensitive(p, "items");
        if (cJSON_IsObject(items) && cJSON_GetObjectItemCaseSensitive(items, "properties"))
            compare_defaults(items, val ? cJSON_GetArrayItem(val, 0) : NULL, sub, s, record_only);
        else
            compare_defaults(p, val, sub, s, record_only);
    }
}

START_TEST(schema_defaults_match_loader)
{
    static const char *const backends[] = { "{\"type\": \"engine\"}", "{\"type\": \"usarsim\"}",
                                            "{\"type\": \"gazebo\"}",
                                            "{\"type\": \"standin\", \"address\": \"h:1\"}",
                                            "{\"type\": \"gz\"}" };
    cJSON *schema = embedded_schema();
    struct seen *all = calloc(1, sizeof *all), *compared = calloc(1, sizeof *compared);
    compare_defaults(schema, NULL, "$", all, true);
    ck_assert_uint_ge(all->n, 30);
    for (size_t i = 0; i < sizeof backends / sizeof backends[0]; i++) {
        char text[256];
        snprintf(text, sizeof text, "{\"robots\": [{\"name\": \"r\", \"backend\": %s}]}",
                 backends[i]);
        struct kn_config *c = parse_ok(text, "minimal");
        char *out = kn_config_to_json(c);
        cJSON *eff = cJSON_Parse(out);
        ck_assert_ptr_nonnull(eff);
        compare_defaults(schema, eff, "$", compared, false);
        cJSON_Delete(eff);
        free(out);
        free(c);
    }
    /* stats_socket has no schema default: it depends on the environment */
    for (size_t i = 0; i < all->n; i++) {
        bool found = false;
        for (size_t j = 0; j < compared->n && !found; j++)
            found = strcmp(all->paths[i], compared->paths[j]) == 0;
        ck_assert_msg(found, "schema default %s was never compared with the loader's",
                      all->paths[i]);
    }
    free(all);
    free(compared);
    cJSON_Delete(schema);
}
END_TEST

/* ---- bad files --------------------------------------------------------- */

struct bad_case {
    const char *file;
    const char *want[5];
};

static const struct bad_case bad_cases[] = {
    { "unknown-top.json",
      { "bad/unknown-top.json: $.colour: unknown key (expected one of \"log_level\"" } },
    { "unknown-nested.json",
      { "bad/unknown-nested.json: $.robots[0].backend.usarsim.dialekt: unknown key" } },
    { "wrong-type.json",
      { "bad/wrong-type.json: $.robots[0].watchdog_ms: expected number, got string \"500\"" } },
    { "out-of-range.json",
      { "bad/out-of-range.json: $.robots[0].watchdog_ms: expected number 50..10000, got 20",
        "bad/out-of-range.json: $.robots[0].backend.reconnect_max_s: expected number 0.05..1, got 2" } },
    { "bad-enum.json",
      { "bad/bad-enum.json: $.robots[0].backend.type: expected one of \"engine\", \"usarsim\", "
        "\"gazebo\", \"standin\", \"gz\", got \"usarsym\"" } },
    { "missing-required.json",
      { "bad/missing-required.json: $.robots[0]: missing required key \"name\"",
        "bad/missing-required.json: $.robots[0].backend: missing required key \"type\"" } },
    { "missing-robots.json", { "bad/missing-robots.json: $: missing required key \"robots\"" } },
    { "robots-empty.json", { "bad/robots-empty.json: $.robots: expected 1..1024 items, got 0" } },
    { "bad-listen-hostname.json",
      { "bad/bad-listen-hostname.json: $.robots[0].listen: expected \"IPv4:PORT\" or \"[IPv6]:PORT\"",
        "got \"localhost:9750\" (expected an IP address, not a host name)" } },
    { "bad-listen-port.json",
      { "bad/bad-listen-port.json: $.robots[0].listen: expected",
        "got \"127.0.0.1:70000\" (port out of range 0..65535)" } },
    { "bad-listen-v6.json",
      { "bad/bad-listen-v6.json: $.robots[0].listen: expected", "IPv6 address needs brackets" } },
    { "bad-listen-noport.json",
      { "bad/bad-listen-noport.json: $.robots[0].listen: expected", "(missing port)" } },
    { "bad-address.json",
      { "bad/bad-address.json: $.robots[0].backend.address: expected \"HOST[:PORT]\"",
        "got \"sim_host:30x0\" (bad host name)" } },
    { "duplicate-ports.json",
      { "bad/duplicate-ports.json: $.robots[1].listen: expected an address and port no other robot "
        "listens on, got \"0.0.0.0:9750\", which clashes with 127.0.0.1:9750 of $.robots[0]" } },
    { "duplicate-names.json",
      { "bad/duplicate-names.json: $.robots[1].name: expected a name no other robot has",
        "got \"Alpha\", also used by $.robots[0]" } },
    { "flipper-min-max.json",
      { "bad/flipper-min-max.json: $.robots[0].limits: expected flipper_min_deg < flipper_max_deg, "
        "got 30 >= -30" } },
    { "syntax-error.json",
      { "bad/syntax-error.json: 4:19: expected valid JSON, got a syntax error at: \"backend\"" } },
    { "truncated.json",
      { "bad/truncated.json: 4:1: expected more JSON, got the end of the file" } },
    { "trailing-garbage.json",
      { "bad/trailing-garbage.json: 2:1: expected the end of the file after the JSON value, got: x" } },
    { "empty.json", { "bad/empty.json: expected a JSON object, got an empty file" } },
    { "blank.json", { "bad/blank.json: expected a JSON object, got an empty file" } },
    { "binary-junk.json",
      { "bad/binary-junk.json: 1:8: expected UTF-8 JSON text, got a NUL byte" } },
    { "not-utf8.json", { "bad/not-utf8.json: 2:29: expected UTF-8 JSON text, got byte 0xe9" } },
    { "nul-escape.json",
      { "bad/nul-escape.json: 1:28: expected a string without NUL characters, got \\u0000" } },
    { "duplicate-key.json", { "bad/duplicate-key.json: $.log_level: duplicate key" } },
    { "bad-name.json",
      { "bad/bad-name.json: $.robots[0].name: expected a string matching ^[A-Za-z0-9_.-]*$, got \"robot one\"",
        "bad/bad-name.json: $.robots[1].name: expected a string of 1..16 characters, got "
        "\"a-name-longer-than-16\" (21 characters)" } },
    { "wrong-section.json",
      { "bad/wrong-section.json: $.robots[0].backend.gazebo: expected no \"gazebo\" section for "
        "backend type \"usarsim\"",
        "bad/wrong-section.json: $.robots[1].backend.engine: expected no \"engine\" section",
        "bad/wrong-section.json: $.robots[1].backend.flippers.RL.link: expected no \"link\" key for "
        "backend type \"engine\" (it applies to gazebo), got one" } },
    { "standin-no-address.json",
      { "bad/standin-no-address.json: $.robots[0].backend.address: expected an address for backend "
        "type \"standin\", got none" } },
    { "not-object.json", { "bad/not-object.json: $: expected object, got an array" } },
    { "bad-encoder-sign.json",
      { "bad/bad-encoder-sign.json: $.robots[0].backend.usarsim.encoder_sign[1]: expected one of -1, "
        "1, got 0",
        "bad/bad-encoder-sign.json: $.robots[1].backend.usarsim.encoder_sign: expected exactly 2 "
        "items, got 1" } },
    { "bad-flipper.json",
      { "bad/bad-flipper.json: $.robots[0].backend.flippers.FL.sign: expected one of -1, 1, got 2",
        "bad/bad-flipper.json: $.robots[0].backend.flippers.XX: unknown key (expected one of \"FL\", "
        "\"FR\", \"RL\", \"RR\")",
        "bad/bad-flipper.json: $.robots[0].backend.flippers.RR.joint: expected a string matching" } },
    { "many-errors.json",
      { "bad/many-errors.json: $.log_level: expected one of \"error\", \"warn\", \"info\", \"debug\", got \"loud\"",
        "bad/many-errors.json: $.robots[0].counts_per_m: expected integer, got number 1.5",
        "bad/many-errors.json: $.robots[0].limits.max_speed_mm_s: expected integer 1..5000, got 9000",
        "bad/many-errors.json: $.robots[0].backend.gazebo.steering_efficiency: expected number > 0 and "
        "<= 1, got 0",
        "bad/many-errors.json: $.robots[0].backend.gazebo.max_angular_speed_rad_s: expected number "
        "0.001..100, got 0" } },
    { "huge-number.json",
      { "bad/huge-number.json: $.robots[0].watchdog_ms: expected a finite number, got a number too "
        "large to represent" } },
};

START_TEST(bad_files_fail_with_clear_errors)
{
    size_t ncases = sizeof bad_cases / sizeof bad_cases[0];
    for (size_t i = 0; i < ncases; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", BAD_DIR, bad_cases[i].file);
        struct kn_config *cfg = calloc(1, sizeof *cfg);
        int rc = kn_config_load(path, NULL, cfg, err, sizeof err);
        ck_assert_msg(rc == -1, "%s should fail", path);
        for (size_t w = 0; w < 4 && bad_cases[i].want[w]; w++)
            ck_assert_msg(strstr(err, bad_cases[i].want[w]) != NULL, "%s: expected\n  %s\nin\n%s",
                          bad_cases[i].file, bad_cases[i].want[w], err);
        free(cfg);
    }
    /* every fixture is covered by the table */
    char names[64][128];
    size_t n = list_json(BAD_DIR, names, 64);
    ck_assert_uint_eq(n, ncases);
    for (size_t i = 0; i < n; i++) {
        bool listed = false;
        for (size_t j = 0; j < ncases && !listed; j++)
            listed = strcmp(names[i], bad_cases[j].file) == 0;
        ck_assert_msg(listed, "bad/%s has no expected error in the table", names[i]);
    }
}
END_TEST

START_TEST(many_errors_are_all_reported)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(kn_config_load(BAD_DIR "/many-errors.json", NULL, cfg, err, sizeof err), -1);
    size_t lines = 1;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, 10);
    free(cfg);
}
END_TEST

/* The schema pass does not hide the loader's rules: type errors and rule
 * errors come out of one run, each path once. */
START_TEST(schema_and_rule_errors_together)
{
    const char *text = "{\"robots\": ["
                       "{\"name\": \"a\", \"listen\": \"127.0.0.1:9750\", \"watchdog_ms\": \"500\","
                       " \"backend\": {\"type\": \"engine\"}},"
                       "{\"name\": \"A\", \"listen\": \"127.0.0.1:9750\","
                       " \"limits\": {\"flipper_min_deg\": 10, \"flipper_max_deg\": -10},"
                       " \"backend\": {\"type\": \"engine\"}}]}";
    const char *const want[] = {
        "t.json: $.robots[0].watchdog_ms: expected number, got string \"500\"",
        "t.json: $.robots[1].name: expected a name no other robot has",
        "t.json: $.robots[1].listen: expected an address and port no other robot listens on",
        "t.json: $.robots[1].limits: expected flipper_min_deg < flipper_max_deg",
        NULL,
    };
    parse_fails(text, want);
    size_t lines = 1;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    ck_assert_msg(lines == 4, "expected 4 lines (each path once), got:\n%s", err);
}
END_TEST

/* kn_config_load_all keeps what loaded, for the checks after the loader. */
START_TEST(load_all_keeps_the_rest)
{
    char path[] = "/tmp/kn-config-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *text =
        "{\"log_level\": \"loud\", \"robots\": [{\"name\": \"a\", \"listen\": \"127.0.0.1:1\","
        " \"backend\": {\"type\": \"engine\", \"engine\": {\"terrain\": \"moon\"}}}]}";
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_uint_eq(kn_config_load_all(path, NULL, cfg, err, sizeof err), 1);
    ck_assert_ptr_nonnull(strstr(err, "$.log_level: expected one of"));
    ck_assert_uint_eq(cfg->n_robots, 1);
    ck_assert_str_eq(cfg->robots[0].backend.terrain, "moon");
    ck_assert_uint_eq(cfg->robots[0].port, 1);
    /* a file that cannot be read: no robots, one problem */
    unlink(path);
    ck_assert_uint_eq(kn_config_load_all(path, NULL, cfg, err, sizeof err), 1);
    ck_assert_uint_eq(cfg->n_robots, 0);
    ck_assert_ptr_nonnull(strstr(err, "cannot open: No such file or directory"));
    free(cfg);
}
END_TEST

START_TEST(error_count_is_capped)
{
    size_t cap = 70000, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "{\"robots\": [");
    for (int i = 0; i < 64; i++)
        len += (size_t)snprintf(
            text + len, cap - len,
            "%s{\"name\": \"r%d\", \"x%d\": 1, \"y\": 2, \"backend\": {\"type\": \"engine\"}}",
            i ? ", " : "", i, i);
    snprintf(text + len, cap - len, "]}");
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(kn_config_parse(text, strlen(text), "cap.json", NULL, cfg, err, sizeof err),
                     -1);
    size_t lines = 1;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, KN_CFG_MAX_ERRORS + 1);
    ck_assert_ptr_nonnull(strstr(err, "cap.json: $.robots[0].x0: unknown key"));
    ck_assert_ptr_nonnull(strstr(err, "cap.json: stopped after 32 errors"));
    free(cfg);
    free(text);
}
END_TEST

static char *n_robots_json(int n)
{
    size_t cap = 128 * (size_t)n + 64, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "{\"robots\": [");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(
            text + len, cap - len,
            "%s{\"name\": \"r%d\", \"listen\": \"127.0.0.1:%d\", \"backend\": {\"type\": \"engine\"}}",
            i ? ", " : "", i, 10000 + i);
    snprintf(text + len, cap - len, "]}");
    return text;
}

START_TEST(too_many_robots)
{
    char *text = n_robots_json(KN_CFG_MAX_ROBOTS + 1);
    fails_with(text, "t.json: $.robots: expected 1..1024 items, got 1025");
    free(text);
    text = n_robots_json(KN_CFG_MAX_ROBOTS);
    struct kn_config *c = parse_ok(text, "1024");
    ck_assert_uint_eq(c->n_robots, 1024);
    ck_assert_uint_eq(c->robots[1023].port, 11023);
    free(c);
    free(text);
}
END_TEST

/* ---- sizes, depth, raw bytes ------------------------------------------- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kn-config-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(file_size_limit)
{
    make_tmpdir();
    const char *cfg_text = "{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"engine\"}}]}";
    size_t n = KN_CFG_MAX_FILE_BYTES;
    char *big = malloc(n + 1);
    memset(big, ' ', n + 1);
    memcpy(big, cfg_text, strlen(cfg_text));
    char path[128];
    snprintf(path, sizeof path, "%s/limit.json", tmpdir);
    /* exactly 1 MiB (padding is whitespace): loads */
    write_file(path, big, n);
    free(load_ok(path));
    /* one byte more: refused with a clear message */
    write_file(path, big, n + 1);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(kn_config_load(path, NULL, cfg, err, sizeof err), -1);
    ck_assert_msg(
        strstr(err,
               "limit.json: expected a file of at most 1 MiB (1048576 bytes), got 1048577 bytes"),
        "%s", err);
    ck_assert_int_eq(kn_config_parse(big, n + 1, "mem.json", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "mem.json: expected a file of at most 1 MiB"));
    /* an endless file is refused without reading it all */
    ck_assert_int_eq(kn_config_load("/dev/zero", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/dev/zero: expected a file of at most 1 MiB"));
    /* no such file, a directory */
    ck_assert_int_eq(kn_config_load("/nonexistent/x.json", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.json: cannot open: No such file"));
    ck_assert_int_eq(kn_config_load(tmpdir, NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "expected a file, got a directory"));
    unlink(path);
    rmdir(tmpdir);
    free(big);
    free(cfg);
}
END_TEST

START_TEST(deep_nesting)
{
    /* 10000 levels: cJSON stops at its nesting limit, the message says so */
    size_t depth = 10000;
    char *text = malloc(2 * depth + 64);
    size_t len = 0;
    len += (size_t)sprintf(text, "{\"robots\": ");
    for (size_t i = 0; i < depth; i++)
        text[len++] = '[';
    for (size_t i = 0; i < depth; i++)
        text[len++] = ']';
    text[len++] = '}';
    text[len] = '\0';
    fails_with(text,
               "t.json: 1:1011: expected JSON nested at most 1000 levels deep, got deeper nesting");
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/deep.json", tmpdir);
    write_file(path, text + 12, 2 * depth); /* the bare arrays */
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(kn_config_load(path, NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(
        strstr(err, "deep.json: 1:1001: expected JSON nested at most 1000 levels deep"));
    unlink(path);
    rmdir(tmpdir);
    /* just under the limit: parses, then the schema says what is wrong */
    len = (size_t)sprintf(text, "{\"robots\": ");
    for (size_t i = 0; i < 998; i++)
        text[len++] = '[';
    for (size_t i = 0; i < 998; i++)
        text[len++] = ']';
    text[len++] = '}';
    text[len] = '\0';
    fails_with(text, "t.json: $.robots[0]: expected object, got an array");
    free(text);
    free(cfg);
}
END_TEST

START_TEST(raw_buffers)
{
    const char *good = "{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"engine\"}}]}";
    size_t n = strlen(good);
    /* not NUL-terminated: an exact-size heap copy (ASan sees any over-read) */
    char *exact = malloc(n);
    memcpy(exact, good, n);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(kn_config_parse(exact, n, "exact", NULL, cfg, err, sizeof err), 0);
    ck_assert_str_eq(cfg->robots[0].name, "a");
    /* a prefix of it: the end of the buffer is the end of the text */
    ck_assert_int_eq(kn_config_parse(exact, n - 1, "prefix", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "prefix: 1:"));
    free(exact);
    /* embedded NUL */
    char withnul[128];
    memcpy(withnul, good, n);
    withnul[20] = '\0';
    ck_assert_int_eq(kn_config_parse(withnul, n, "nul", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "nul: 1:21: expected UTF-8 JSON text, got a NUL byte"));
    /* nothing at all */
    ck_assert_int_eq(kn_config_parse(NULL, 0, "none", NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "none: expected a JSON object, got an empty file"));
    ck_assert_int_eq(kn_config_parse(NULL, 5, NULL, NULL, cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "(config): no data"));
    /* a UTF-8 byte order mark is accepted */
    char bom[256];
    snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", good);
    ck_assert_int_eq(kn_config_parse(bom, strlen(bom), "bom", NULL, cfg, err, sizeof err), 0);
    /* overlong encoding, surrogate, truncated sequence */
    const char *bad_utf8[] = { "{\"robots\": \"\xC0\xAF\"}", "{\"robots\": \"\xED\xA0\x80\"}",
                               "{\"robots\": \"\xE2\x82" };
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(
            kn_config_parse(bad_utf8[i], strlen(bad_utf8[i]), "u", NULL, cfg, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "u: 1:13: expected UTF-8 JSON text, got byte 0x"), "%s", err);
    }
    /* valid multi-byte UTF-8 counts as one character per code point */
    fails_with(
        "{\"robots\": [{\"name\": \"\xC3\xA9\xC3\xA9\", \"backend\": {\"type\": \"engine\"}}]}",
        "t.json: $.robots[0].name: expected a string matching");
    free(cfg);
}
END_TEST

START_TEST(error_buffer_handling)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg), *before = malloc(sizeof *before);
    memset(cfg, 0x5A, sizeof *cfg);
    memcpy(before, cfg, sizeof *cfg);
    char small[16];
    memset(small, 'x', sizeof small);
    ck_assert_int_eq(kn_config_load(BAD_DIR "/many-errors.json", NULL, cfg, small, 8), -1);
    ck_assert_uint_le(strlen(small), 7);
    ck_assert_int_eq(small[8], 'x'); /* nothing written past errlen */
    ck_assert_int_eq(kn_config_load(BAD_DIR "/many-errors.json", NULL, cfg, NULL, 0), -1);
    ck_assert_int_eq(kn_config_load(BAD_DIR "/many-errors.json", NULL, cfg, small, 0), -1);
    /* a failed load leaves the old config alone (SIGHUP keeps running on it) */
    ck_assert(memcmp(cfg, before, sizeof *cfg) == 0);
    ck_assert_int_eq(kn_config_load(NULL, NULL, cfg, err, sizeof err), -1);
    free(cfg);
    free(before);
}
END_TEST

/* ---- schema_path --------------------------------------------------------- */

START_TEST(schema_path_option)
{
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_int_eq(
        kn_config_load(EXAMPLES_DIR "/multi-robot.json", SCHEMA_FILE, cfg, err, sizeof err), 0);
    ck_assert_uint_eq(cfg->n_robots, 3);
    ck_assert_int_eq(kn_config_load(EXAMPLES_DIR "/multi-robot.json",
                                    SCHEMAS_DIR "/one-robot.schema.json", cfg, err, sizeof err),
                     -1);
    ck_assert_msg(
        strstr(err, "examples/multi-robot.json: $.robots: expected 1..1 items, got 3") ||
            strstr(err, "examples/multi-robot.json: $.robots: expected exactly 1 item, got 3"),
        "%s", err);
    ck_assert_int_eq(
        kn_config_load(DEFAULT_CONFIG, SCHEMAS_DIR "/one-robot.schema.json", cfg, err, sizeof err),
        0);

    ck_assert_int_eq(kn_config_load(DEFAULT_CONFIG, SCHEMAS_DIR "/unsupported.schema.json", cfg,
                                    err, sizeof err),
                     -1);
    ck_assert_msg(
        strstr(
            err,
            "schemas/unsupported.schema.json: $.properties.robots.uniqueItems: unsupported keyword"),
        "%s", err);
    ck_assert_int_eq(kn_config_load(DEFAULT_CONFIG, SCHEMAS_DIR "/bad-default.schema.json", cfg,
                                    err, sizeof err),
                     -1);
    ck_assert_msg(
        strstr(
            err,
            "bad-default.schema.json: $.properties.log_level.default: expected one of \"error\", "
            "\"info\", got \"verbose\""),
        "%s", err);
    ck_assert_msg(
        strstr(
            err,
            "bad-default.schema.json: $.properties.robots.default: expected at least 1 item, got 0"),
        "%s", err);
    ck_assert_int_eq(kn_config_load(DEFAULT_CONFIG, SCHEMAS_DIR "/bad-pattern.schema.json", cfg,
                                    err, sizeof err),
                     -1);
    ck_assert_msg(
        strstr(
            err,
            "bad-pattern.schema.json: $.properties.stats_socket.pattern: expected a POSIX extended "
            "regular expression"),
        "%s", err);
    ck_assert_int_eq(
        kn_config_load(DEFAULT_CONFIG, SCHEMAS_DIR "/missing.schema.json", cfg, err, sizeof err),
        -1);
    ck_assert_msg(strstr(err, "schemas/missing.schema.json: cannot open"), "%s", err);
    ck_assert_int_eq(
        kn_config_load(DEFAULT_CONFIG, BAD_DIR "/syntax-error.json", cfg, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "bad/syntax-error.json: 4:19: expected valid JSON"), "%s", err);
    free(cfg);
}
END_TEST

START_TEST(loader_does_not_trust_the_schema)
{
    /* With a schema that accepts anything, wrong types still get clear
     * errors from the loader instead of reaching the structs. */
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        { "{\"robots\": [{\"name\": 5, \"backend\": {\"type\": \"engine\"}}]}",
          "p.json: $.robots[0].name: expected a string, got number 5" },
        { "{\"robots\": [{\"name\": \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\", \"backend\": {\"type\": \"engine\"}}]}",
          "p.json: $.robots[0].name: expected a string of at most 16 bytes" },
        { "{\"robots\": [{\"name\": \"a\", \"counts_per_m\": 1e12, \"backend\": {\"type\": \"engine\"}}]}",
          "p.json: $.robots[0].counts_per_m: expected an integer in the 32-bit range, got number 1000000000000" },
        { "{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"warp\"}}]}",
          "p.json: $.robots[0].backend.type: expected one of \"engine\"" },
        { "{\"robots\": [{\"name\": \"a\", \"backend\": 3}]}",
          "p.json: $.robots[0].backend: expected an object, got number 3" },
        { "{\"robots\": [{\"name\": \"a\"}]}",
          "p.json: $.robots[0]: missing required key \"backend\"" },
        { "{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"engine\", \"flippers\": {\"FL\": {\"sign\": 0.5}}}}]}",
          "p.json: $.robots[0].backend.flippers.FL.sign: expected one of -1, 1, got 0.5" },
        { "{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"usarsim\", \"usarsim\": {\"location_m\": [1, 2]}}}]}",
          "p.json: $.robots[0].backend.usarsim.location_m: expected an array of 3 numbers, got an array" },
        { "{\"robots\": []}", "p.json: $.robots: expected an array of 1..1024 robots" },
        { "{\"robots\": [7]}", "p.json: $.robots[0]: expected an object, got number 7" },
        { "[]", "p.json: $: expected an object, got an array" },
        { "{\"log_level\": 1, \"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"engine\"}}]}",
          "p.json: $.log_level: expected one of \"error\", \"warn\", \"info\", \"debug\", got number 1" },
    };
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = kn_config_parse(cases[i].text, strlen(cases[i].text), "p.json",
                                 SCHEMAS_DIR "/permissive.schema.json", cfg, err, sizeof err);
        ck_assert_msg(rc == -1, "case %zu should fail", i);
        ck_assert_msg(strstr(err, cases[i].want) != NULL, "case %zu: expected\n  %s\nin\n%s", i,
                      cases[i].want, err);
    }
    free(cfg);
}
END_TEST

/* ---- addresses ----------------------------------------------------------- */

START_TEST(listen_rules)
{
    char text[512];
    /* port 0 (kernel's choice) never clashes */
    snprintf(
        text, sizeof text,
        "{\"robots\": [{\"name\": \"a\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\"}},"
        "{\"name\": \"b\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\"}}]}");
    struct kn_config *c = parse_ok(text, "zero");
    ck_assert_uint_eq(c->robots[0].port, 0);
    free(c);
    static const struct {
        const char *a, *b;
        bool clash;
    } pairs[] = {
        { "127.0.0.1:9750", "127.0.0.1:9750", true },
        { "127.0.0.1:9750", "127.0.0.2:9750", false },
        { "127.0.0.1:9750", "127.0.0.1:9751", false },
        { "0.0.0.0:9750", "10.1.2.3:9750", true },
        { "[::]:9750", "127.0.0.1:9750", true },
        { "[::1]:9750", "127.0.0.1:9750", false },
        { "0.0.0.0:9750", "[::1]:9750", false },
        { "[::1]:9750", "[0:0:0:0:0:0:0:1]:9750", true },
        { "[::]:9750", "[::1]:9750", true },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        snprintf(
            text, sizeof text,
            "{\"robots\": [{\"name\": \"a\", \"listen\": \"%s\", \"backend\": {\"type\": \"engine\"}},"
            "{\"name\": \"b\", \"listen\": \"%s\", \"backend\": {\"type\": \"engine\"}}]}",
            pairs[i].a, pairs[i].b);
        struct kn_config *cfg = calloc(1, sizeof *cfg);
        int rc = kn_config_parse(text, strlen(text), "l.json", NULL, cfg, err, sizeof err);
        ck_assert_msg(rc == (pairs[i].clash ? -1 : 0), "%s vs %s: rc %d: %s", pairs[i].a,
                      pairs[i].b, rc, err);
        if (pairs[i].clash)
            ck_assert_ptr_nonnull(
                strstr(err, "l.json: $.robots[1].listen: expected an address and port no other"));
        free(cfg);
    }
    static const char *const bad[] = {
        "",       ":9750",     "1.2.3.4:", "1.2.3.4:-1", "1.2.3.4:123456", "[::1",
        "[::1]x", "[zz::1]:1", "[]:1",     "1.2.3:9750", "1.2.3.4:97 50"
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        robot_json(text, sizeof text, bad[i], "{\"type\": \"engine\"}");
        fails_with(text, "t.json: $.robots[0].listen: expected");
    }
}
END_TEST

START_TEST(backend_address_rules)
{
    static const struct {
        const char *backend;
        const char *host;
        unsigned port;
    } ok[] = {
        { "{\"type\": \"usarsim\"}", "127.0.0.1", 3000 },
        { "{\"type\": \"usarsim\", \"address\": \"10.0.0.5\"}", "10.0.0.5", 3000 },
        { "{\"type\": \"usarsim\", \"address\": \"[::1]\"}", "::1", 3000 },
        { "{\"type\": \"usarsim\", \"address\": \"[fe80::1]:4000\"}", "fe80::1", 4000 },
        { "{\"type\": \"gazebo\"}", "127.0.0.1", 11345 },
        { "{\"type\": \"gazebo\", \"address\": \"sim-1.example.org\"}", "sim-1.example.org",
          11345 },
        { "{\"type\": \"engine\", \"address\": \"127.0.0.1\"}", "127.0.0.1", 3000 },
        { "{\"type\": \"engine\"}", "", 0 },
        { "{\"type\": \"standin\", \"address\": \"127.0.0.1:5000\"}", "127.0.0.1", 5000 },
    };
    char text[512];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        robot_json(text, sizeof text, "127.0.0.1:9750", ok[i].backend);
        struct kn_config *c = parse_ok(text, "addr");
        ck_assert_str_eq(c->robots[0].backend.host, ok[i].host);
        ck_assert_uint_eq(c->robots[0].backend.port, ok[i].port);
        free(c);
    }
    static const char *const bad[] = {
        "{\"type\": \"usarsim\", \"address\": \"bad_host\"}",
        "{\"type\": \"usarsim\", \"address\": \"host:0\"}",
        "{\"type\": \"usarsim\", \"address\": \"-host.example\"}",
        "{\"type\": \"usarsim\", \"address\": \"host-.example\"}",
        "{\"type\": \"usarsim\", \"address\": \"a..b\"}",
        "{\"type\": \"gazebo\", \"address\": \"::1\"}",
        "{\"type\": \"standin\", \"address\": \"127.0.0.1\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        robot_json(text, sizeof text, "127.0.0.1:9750", bad[i]);
        fails_with(text, "t.json: $.robots[0].backend.address: expected");
    }
}
END_TEST

START_TEST(start_and_location_together)
{
    /* Allowed: the backend spawns at the PlayerStart; the location is kept. */
    struct kn_config *c =
        parse_ok("{\"robots\": [{\"name\": \"a\", \"backend\": {\"type\": \"usarsim\","
                 " \"usarsim\": {\"start\": \"P1\", \"location_m\": [1, 2, 3]}}}]}",
                 "both");
    ck_assert_str_eq(c->robots[0].backend.start_tag, "P1");
    ck_assert_double_eq(c->robots[0].backend.spawn_location_m[1], 2.0);
    free(c);
}
END_TEST

/* ---- robot equality ------------------------------------------------------ */

#define N_MUTATIONS 42

static void mutate(struct kn_cfg_robot *r, int f)
{
    struct kn_cfg_backend *b = &r->backend;
    switch (f) {
    case 0: r->name[0] ^= 1; break;
    case 1: strcpy(r->bind_host, "127.0.0.2"); break;
    case 2: r->port++; break;
    case 3: r->watchdog_ms += 1; break;
    case 4: r->max_speed_mm_s--; break;
    case 5: r->flipper_min_cdeg++; break;
    case 6: r->flipper_max_cdeg--; break;
    case 7: r->counts_per_m++; break;
    case 8: r->battery_v += 0.5; break;
    case 9: b->kind = KN_BACKEND_STANDIN; break;
    case 10: strcpy(b->host, "other"); break;
    case 11: b->port++; break;
    case 12: b->connect_timeout_s *= 2; break;
    case 13: b->reconnect_max_s /= 2; break;
    case 14: b->stale_ms += 1; break;
    case 15: b->wheel_radius_m += 0.01; break;
    case 16: b->counts_per_tick *= 2; break;
    case 17:
    case 18:
    case 19:
    case 20: strcat(b->flipper[f - 17].name, "x"); break;
    case 21:
    case 22:
    case 23:
    case 24: b->flipper[f - 21].sign = -b->flipper[f - 21].sign; break;
    case 25:
    case 26:
    case 27:
    case 28: b->flipper[f - 25].offset_rad += 0.01; break;
    case 29: b->dialect = b->dialect == KN_USARSIM_UDK ? KN_USARSIM_UT2004 : KN_USARSIM_UDK; break;
    case 30: strcpy(b->class_name, "USARBot.P2DX"); break;
    case 31: strcpy(b->start_tag, "P9"); break;
    case 32: b->spawn_location_m[2] += 1; break;
    case 33: b->spawn_rpy_rad[1] += 0.1; break;
    case 34: strcpy(b->engine_path, "/opt/engine"); break;
    case 35: strcpy(b->terrain, "ramp"); break;
    case 36:
    case 37:
    case 38:
    case 39: strcat(b->flipper[f - 36].link, "l"); break;
    case 40:
    case 41: b->encoder_sign[f - 40] = -b->encoder_sign[f - 40]; break;
    }
}

START_TEST(robot_equality)
{
    struct kn_config *c = load_ok(EXAMPLES_DIR "/multi-robot.json");
    for (size_t i = 0; i < c->n_robots; i++) {
        struct kn_cfg_robot a = c->robots[i], b = c->robots[i];
        ck_assert(kn_config_robot_equal(&a, &b));
        for (int f = 0; f < N_MUTATIONS; f++) {
            b = a;
            mutate(&b, f);
            ck_assert_msg(!kn_config_robot_equal(&a, &b), "robot %zu, change %d not seen", i, f);
            ck_assert(!kn_config_robot_equal(&b, &a));
        }
        for (int g = 0; g < 6; g++) {
            b = a;
            if (g == 0)
                strcpy(b.backend.model, "other");
            if (g == 1)
                b.backend.twist_cmd = !b.backend.twist_cmd;
            if (g == 2)
                b.backend.tracks_separation_m += 0.01;
            if (g == 3)
                b.backend.steering_efficiency /= 2;
            if (g == 4)
                b.backend.max_linear_speed_m_s *= 2;
            if (g == 5)
                b.backend.max_angular_speed_rad_s *= 2;
            ck_assert_msg(!kn_config_robot_equal(&a, &b), "gazebo change %d not seen", g);
        }
        /* bytes after a string's NUL do not count */
        b = a;
        memset(b.name + strlen(b.name) + 1, 'z', sizeof b.name - strlen(b.name) - 1);
        ck_assert(kn_config_robot_equal(&a, &b));
        /* the shared key: a key, another key, another length; bytes past
         * its length do not count */
        b = a;
        b.key_len = 32;
        ck_assert(!kn_config_robot_equal(&a, &b));
        a.key_len = 32;
        ck_assert(kn_config_robot_equal(&a, &b));
        b.key[31] ^= 1;
        ck_assert(!kn_config_robot_equal(&a, &b));
        b = a;
        b.key_len = 33;
        ck_assert(!kn_config_robot_equal(&a, &b));
        b = a;
        b.key[40] ^= 1;
        ck_assert(kn_config_robot_equal(&a, &b));
    }
    /* the same file loaded twice: equal robot by robot (what SIGHUP relies on) */
    struct kn_config *d = load_ok(EXAMPLES_DIR "/multi-robot.json");
    assert_configs_equal(c, d);
    free(c);
    free(d);
}
END_TEST

/* ---- the validator itself -------------------------------------------------- */

START_TEST(validator_keywords)
{
    cJSON *schema = cJSON_Parse(
        "{\"type\": \"object\", \"additionalProperties\": false, \"required\": [\"i\"],"
        " \"properties\": {"
        "  \"i\": {\"type\": \"integer\", \"exclusiveMinimum\": 0, \"exclusiveMaximum\": 10},"
        "  \"s\": {\"type\": \"string\", \"minLength\": 2, \"maxLength\": 3, \"pattern\": \"b\"},"
        "  \"n\": {\"type\": [\"string\", \"null\"]},"
        "  \"e\": {\"enum\": [1, \"one\", true, null]},"
        "  \"a\": {\"type\": \"array\", \"maxItems\": 2, \"items\": {\"type\": \"number\", \"minimum\": 0}},"
        "  \"m\": {\"type\": \"object\", \"additionalProperties\": {\"type\": \"boolean\"}},"
        "  \"a b\": {\"type\": \"boolean\"}}}");
    ck_assert_ptr_nonnull(schema);
    struct collected got = { 0 };
    ck_assert_uint_eq(kn_jsonschema_check(schema, collect, &got), 0);

    ck_assert_uint_eq(validate_text(schema,
                                    "{\"i\": 1.0, \"s\": \"\xC3\xA9\xC3\xA9"
                                    "b\", \"n\": null,"
                                    " \"e\": \"one\", \"a\": [0, 1e3], \"m\": {\"x\": true},"
                                    " \"a b\": false}",
                                    &got),
                      0);
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1.5}", &got), 1);
    ck_assert_str_eq(got.text, "$.i: expected integer, got number 1.5\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 0}", &got), 1);
    ck_assert_str_eq(got.text, "$.i: expected integer > 0 and < 10, got 0\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 10}", &got), 1);
    ck_assert_uint_eq(validate_text(schema, "{}", &got), 1);
    ck_assert_str_eq(got.text, "$: missing required key \"i\"\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"s\": \"x\"}", &got), 2);
    ck_assert_str_eq(got.text,
                     "$.s: expected a string of 2..3 characters, got \"x\" (1 character)\n"
                     "$.s: expected a string matching b, got \"x\"\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"n\": 3}", &got), 1);
    ck_assert_str_eq(got.text, "$.n: expected string or null, got number 3\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"e\": false}", &got), 1);
    ck_assert_str_eq(got.text, "$.e: expected one of 1, \"one\", true, null, got false\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"a\": [1, -1, 2]}", &got), 2);
    ck_assert_str_eq(
        got.text, "$.a: expected at most 2 items, got 3\n$.a[1]: expected number >= 0, got -1\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"m\": {\"x y\": 1}}", &got), 1);
    ck_assert_str_eq(got.text, "$.m[\"x y\"]: expected boolean, got number 1\n");
    ck_assert_uint_eq(validate_text(schema, "{\"i\": 1, \"a b\": 1, \"zz\": 2, \"i\": 2}", &got),
                      3);
    ck_assert_ptr_nonnull(strstr(got.text, "$[\"a b\"]: expected boolean, got number 1\n"));
    ck_assert_ptr_nonnull(strstr(got.text, "$.zz: unknown key (expected one of \"i\", \"s\""));
    ck_assert_ptr_nonnull(strstr(got.text, "$.i: duplicate key"));
    /* long and odd strings are cut and escaped in messages */
    char longdoc[200], want[200];
    snprintf(longdoc, sizeof longdoc, "{\"i\": 1, \"s\": \"\\n\\u0001%s\"}",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ck_assert_uint_eq(validate_text(schema, longdoc, &got), 2);
    /* 48 characters are shown: the two escaped ones and 46 of the a's */
    snprintf(want, sizeof want, "got \"\\n\\u0001%.46s...\"",
             "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ck_assert_msg(strstr(got.text, want) != NULL, "%s", got.text);
    /* max_errors stops the walk */
    cJSON *doc = cJSON_Parse("{\"a\": [-1, -2, -3], \"i\": -1}");
    memset(&got, 0, sizeof got);
    ck_assert_uint_eq(kn_jsonschema_validate(schema, doc, 2, collect, &got), 2);
    cJSON_Delete(doc);
    cJSON_Delete(schema);

    /* the schema check catches what would silently weaken validation */
    static const char *const bad_schemas[] = {
        "{\"type\": \"integr\"}",
        "{\"minimum\": \"0\"}",
        "{\"maxLength\": -1}",
        "{\"required\": [1]}",
        "{\"properties\": {\"x\": 3}}",
        "{\"items\": true}",
        "{\"enum\": []}",
        "{\"oneOf\": []}",
        "{\"type\": \"string\", \"type\": \"number\"}",
        "[]",
        "{\"additionalProperties\": 1}",
        "{\"type\": []}",
        "{\"pattern\": \"(\"}",
        "{\"title\": 1}",
    };
    for (size_t i = 0; i < sizeof bad_schemas / sizeof bad_schemas[0]; i++) {
        cJSON *s = cJSON_Parse(bad_schemas[i]);
        ck_assert_ptr_nonnull(s);
        memset(&got, 0, sizeof got);
        ck_assert_msg(kn_jsonschema_check(s, collect, &got) > 0, "schema %s should be refused",
                      bad_schemas[i]);
        cJSON_Delete(s);
    }
}
END_TEST

/* ---- robustness ---------------------------------------------------------- */

static uint32_t rng_state = 0x2545F491u;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void check_one(const char *buf, size_t len, struct kn_config *cfg)
{
    int rc = kn_config_parse(buf, len, "fz.json", NULL, cfg, err, sizeof err);
    ck_assert(rc == 0 || rc == -1);
    if (rc == -1)
        ck_assert_msg(strncmp(err, "fz.json:", 8) == 0, "%s", err);
    else
        ck_assert_str_eq(err, "");
}

START_TEST(random_inputs_never_crash)
{
    size_t base_len;
    char *base = slurp(EXAMPLES_DIR "/multi-robot.json", &base_len);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    char *buf = malloc(base_len + 64);
    static const char tokens[] = "{}[]\",:0123456789.eE-+ \\ntrufalsn\xC3\xA9\xFF";
    for (int iter = 0; iter < 3000; iter++) {
        size_t len = base_len;
        memcpy(buf, base, len);
        int edits = 1 + (int)(rng() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = rng() % len;
            switch (rng() % 4) {
            case 0: buf[at] = tokens[rng() % (sizeof tokens - 1)]; break;
            case 1: buf[at] = (char)(rng() & 0xFF); break;
            case 2: len = at + 1; break; /* truncate */
            case 3:                      /* duplicate a span */
                if (len + 32 <= base_len + 64) {
                    size_t n = rng() % 32;
                    if (at + n > len)
                        n = len - at;
                    memmove(buf + at + n, buf + at, len - at);
                    len += n;
                }
                break;
            }
        }
        /* an exact-size copy so ASan catches any read past the end */
        char *exact = malloc(len ? len : 1);
        memcpy(exact, buf, len);
        check_one(exact, len, cfg);
        free(exact);
    }
    for (int iter = 0; iter < 500; iter++) {
        size_t len = rng() % 256;
        char *exact = malloc(len ? len : 1);
        for (size_t i = 0; i < len; i++)
            exact[i] = (char)(rng() & 0xFF);
        check_one(exact, len, cfg);
        free(exact);
    }
    free(buf);
    free(base);
    free(cfg);
}
END_TEST

/* The service keys: the stats socket's mode and group, the capture
 * directory and cap, ready_timeout_s. */
static void service_json(char *buf, size_t len, const char *top)
{
    snprintf(buf, len,
             "{%s, \"robots\": [{\"name\": \"r\", \"backend\": {\"type\": "
             "\"standin\", \"address\": \"127.0.0.1:1\"}}]}",
             top);
}

START_TEST(service_keys)
{
    char t[1024];
    service_json(t, sizeof t, "\"log_level\": \"info\"");
    struct kn_config *c = parse_ok(t, "defaults.json");
    ck_assert_uint_eq(c->stats_socket_mode, 0660);
    ck_assert_str_eq(c->stats_socket_group, "");
    ck_assert_uint_eq(c->capture_max_bytes, 1024ull << 20);
    ck_assert(c->ready_timeout_s == 30);
    ck_assert(c->capture_dir_default);
    free(c);

    service_json(t, sizeof t,
                 "\"stats_socket_mode\": \"600\", \"stats_socket_group\": 4242, "
                 "\"capture_dir\": \"/srv/caps\", \"capture_max_mb\": 0, \"ready_timeout_s\": 0");
    c = parse_ok(t, "set.json");
    ck_assert_uint_eq(c->stats_socket_mode, 0600);
    ck_assert_str_eq(c->stats_socket_group, "4242");
    ck_assert_str_eq(c->capture_dir, "/srv/caps");
    ck_assert(!c->capture_dir_default);
    ck_assert_uint_eq(c->capture_max_bytes, 0);
    ck_assert(c->ready_timeout_s == 0);
    /* the effective config loads back to the same values */
    char *json = kn_config_to_json(c);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"stats_socket_mode\": \"0600\"") &&
                      strstr(json, "\"stats_socket_group\": \"4242\""),
                  "%s", json);
    struct kn_config *back = parse_ok(json, "back.json");
    ck_assert_uint_eq(back->stats_socket_mode, 0600);
    ck_assert_str_eq(back->stats_socket_group, "4242");
    ck_assert_str_eq(back->capture_dir, "/srv/caps");
    ck_assert_uint_eq(back->capture_max_bytes, 0);
    free(json);
    free(back);
    free(c);

    service_json(t, sizeof t, "\"stats_socket_group\": \"kenaf\"");
    c = parse_ok(t, "name.json");
    ck_assert_str_eq(c->stats_socket_group, "kenaf");
    free(c);

    /* modes for others or with execute bits, relative directories, ranges */
    static const char *const bad[][2] = {
        { "\"stats_socket_mode\": \"0666\"",
          "t.json: $.stats_socket_mode: expected a mode within 0660 (read and write for owner and "
          "group; nothing for others, no execute bits), got \"0666\" (grants access to others)" },
        { "\"stats_socket_mode\": \"0770\"", "got \"0770\" (execute bits)" },
        { "\"stats_socket_mode\": \"rw-rw----\"", "$.stats_socket_mode: " },
        { "\"stats_socket_mode\": 660", "$.stats_socket_mode: expected string" },
        { "\"stats_socket_group\": \"\"", "$.stats_socket_group: " },
        { "\"stats_socket_group\": -1", "$.stats_socket_group: " },
        { "\"capture_dir\": \"out/caps\"", "$.capture_dir: " },
        { "\"capture_max_mb\": 1.5", "$.capture_max_mb: " },
        { "\"ready_timeout_s\": 3601", "$.ready_timeout_s: " },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        service_json(t, sizeof t, bad[i][0]);
        fails_with(t, bad[i][1]);
    }
}
END_TEST

START_TEST(fault_injection_key)
{
    char t[1024];
    service_json(t, sizeof t, "\"log_level\": \"info\"");
    struct kn_config *c = parse_ok(t, "default.json");
    ck_assert(c->fault_injection && c->robots[0].fault_injection);
    free(c);

    /* off: no faults sections, and the effective config loads back */
    service_json(t, sizeof t, "\"fault_injection\": false");
    c = parse_ok(t, "off.json");
    ck_assert(!c->fault_injection && !c->robots[0].fault_injection);
    char *json = kn_config_to_json(c);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"fault_injection\": false") && !strstr(json, "\"faults\""), "%s",
                  json);
    struct kn_config *back = parse_ok(json, "back.json");
    ck_assert(kn_config_robot_equal(&back->robots[0], &c->robots[0]));
    ck_assert(!kn_config_robot_equal(&back->robots[0], &(struct kn_cfg_robot){ 0 }));
    free(json);
    free(back);
    free(c);

    fails_with("{\"fault_injection\": false, \"robots\": [{\"name\": \"r\", \"faults\": {}, "
               "\"backend\": {\"type\": \"standin\", \"address\": \"127.0.0.1:1\"}}]}",
               "t.json: $.robots[0].faults: expected no faults section, since \"fault_injection\" "
               "is false, got one");
    service_json(t, sizeof t, "\"fault_injection\": 0");
    fails_with(t, "$.fault_injection: expected boolean");
}
END_TEST

static Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("config");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, default_config_loads);
    tcase_add_test(tc, examples_load_and_validate);
    tcase_add_test(tc, example_values);
    tcase_add_test(tc, embedded_schema_is_the_file);
    tcase_add_test(tc, round_trip_shipped);
    tcase_add_test(tc, round_trip_unusual_values);
    tcase_add_test(tc, schema_defaults_match_loader);
    tcase_add_test(tc, fault_injection_key);
    tcase_add_test(tc, bad_files_fail_with_clear_errors);
    tcase_add_test(tc, many_errors_are_all_reported);
    tcase_add_test(tc, schema_and_rule_errors_together);
    tcase_add_test(tc, load_all_keeps_the_rest);
    tcase_add_test(tc, error_count_is_capped);
    tcase_add_test(tc, too_many_robots);
    tcase_add_test(tc, file_size_limit);
    tcase_add_test(tc, deep_nesting);
    tcase_add_test(tc, raw_buffers);
    tcase_add_test(tc, error_buffer_handling);
    tcase_add_test(tc, schema_path_option);
    tcase_add_test(tc, loader_does_not_trust_the_schema);
    tcase_add_test(tc, listen_rules);
    tcase_add_test(tc, backend_address_rules);
    tcase_add_test(tc, start_and_location_together);
    tcase_add_test(tc, robot_equality);
    tcase_add_test(tc, validator_keywords);
    tcase_add_test(tc, random_inputs_never_crash);
    tcase_add_test(tc, service_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return h_run_suite(config_suite());
}
