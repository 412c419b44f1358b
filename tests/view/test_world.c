/* Unit tests of the KRP/1 world description on the robot side: the rules
 * answering WORLD_REQ from the document they are given (daemon/rules.c),
 * and the document kenaf-simd builds from the engine's files
 * (daemon/world_doc.c), read from the repository's config/ folder. */
#include <check.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "harness_proc.h"
#include "harness_suite.h"
#include "krp.h"
#include "rules.h"
#include "terrain.h" /* engine/: kn_terrain_load */
#include "world_doc.h"

#define MS 1000000ull

static struct {
    struct kn_krp_msg out[64];
    int nout;
    int ncmd;
} cap;

static void cap_send(void *ctx, const struct kn_addr *to, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)to;
    ck_assert_int_lt(cap.nout, 64);
    ck_assert_int_eq(kn_krp_decode(buf, len, &cap.out[cap.nout++]), KN_KRP_OK);
}

static void cap_command(void *ctx, const struct kn_command *c, uint64_t t)
{
    (void)ctx;
    (void)c;
    (void)t;
    cap.ncmd++;
}

static struct kn_rules *R;
static struct kn_addr peer;
static uint64_t now = 1000 * MS;

static void setup(void)
{
    memset(&cap, 0, sizeof cap);
    struct kn_rules_params p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "kenaf");
    p.capabilities = KN_KRP_CAP_GROUND_TRUTH;
    p.counts_per_m = 5000;
    p.max_speed_mm_s = 800;
    p.flipper_min_cdeg = -11950;
    p.flipper_max_cdeg = 11950;
    p.watchdog_ms = 500;
    p.stale_ms = 500;
    struct kn_rules_io io = { .send = cap_send, .command = cap_command };
    R = kn_rules_new(&p, &io, now);
    ck_assert_ptr_nonnull(R);
    kn_rules_backend(R, true);
    struct sockaddr_in sin = { .sin_family = AF_INET,
                               .sin_port = htons(40000),
                               .sin_addr.s_addr = htonl(0x7f000001) };
    ck_assert_int_eq(kn_addr_set(&peer, (struct sockaddr *)&sin), 0);
}

static void teardown(void)
{
    kn_rules_free(R);
}

static void send_type(uint8_t type, uint32_t seq, uint32_t offset)
{
    struct kn_krp_msg m;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    kn_krp_init(&m, type, seq, KN_KRP_F_ACK_REQ);
    if (type == KN_KRP_WORLD_REQ)
        m.u.world_req.offset = offset;
    if (type == KN_KRP_HELLO)
        strcpy(m.u.hello.name, "view");
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    kn_rules_datagram(R, &peer, buf, n, now);
}

static const struct kn_krp_msg *last(void)
{
    ck_assert_int_gt(cap.nout, 0);
    return &cap.out[cap.nout - 1];
}

START_TEST(rules_without_document)
{
    send_type(KN_KRP_HELLO, 1, 0);
    ck_assert_uint_eq(last()->u.hello_ack.capabilities,
                      KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_SESSIONS | KN_KRP_CAP_ESTOP_INFO);
    send_type(KN_KRP_WORLD_REQ, 2, 0);
    ck_assert_uint_eq(last()->h.type, KN_KRP_WORLD);
    ck_assert_uint_eq(last()->u.world.total_len, 0);
    ck_assert_uint_eq(last()->u.world.n, 0);
}
END_TEST

/* 1000 bytes: chunks of 480, 480 and 40 bytes; any offset inside works;
 * the end and beyond earn RANGE; nothing else happens. */
START_TEST(rules_answer_chunks)
{
    char doc[1000];
    for (size_t i = 0; i < sizeof doc; i++)
        doc[i] = (char)('a' + i % 26);
    ck_assert_int_eq(kn_rules_set_world(R, doc, sizeof doc), 0);
    send_type(KN_KRP_HELLO, 1, 0);
    ck_assert_uint_eq(last()->u.hello_ack.capabilities, KN_KRP_CAP_GROUND_TRUTH | KN_KRP_CAP_WORLD |
                                                            KN_KRP_CAP_SESSIONS |
                                                            KN_KRP_CAP_ESTOP_INFO);
    char got[1000];
    uint32_t off = 0;
    for (int k = 0; off < sizeof doc; k++) {
        send_type(KN_KRP_WORLD_REQ, 10 + (uint32_t)k, off);
        const struct kn_krp_world *w = &last()->u.world;
        ck_assert_uint_eq(last()->h.type, KN_KRP_WORLD);
        ck_assert_uint_eq(w->total_len, 1000);
        ck_assert_uint_eq(w->offset, off);
        ck_assert_uint_eq(w->n, off + 480 <= 1000 ? 480 : 1000 - off);
        memcpy(got + off, w->data, w->n);
        off += w->n;
    }
    ck_assert_mem_eq(got, doc, sizeof doc);
    send_type(KN_KRP_WORLD_REQ, 20, 7);
    ck_assert_uint_eq(last()->u.world.n, 480);
    ck_assert_mem_eq(last()->u.world.data, doc + 7, 480);
    send_type(KN_KRP_WORLD_REQ, 21, 1000);
    ck_assert_uint_eq(last()->h.type, KN_KRP_ERROR);
    ck_assert_uint_eq(last()->u.error.code, KN_KRP_ERR_RANGE);
    ck_assert_uint_eq(last()->u.error.offending_seq, 21);
    ck_assert_uint_eq(last()->u.error.offending_type, KN_KRP_WORLD_REQ);
    send_type(KN_KRP_WORLD_REQ, 22, 0xFFFFFFFFu);
    ck_assert_uint_eq(last()->u.error.code, KN_KRP_ERR_RANGE);
    ck_assert_uint_eq(kn_rules_stats(R)->world_bad_offset, 2);
    ck_assert_uint_eq(kn_rules_stats(R)->in_type[KN_KRP_WORLD_REQ], 6);
    /* an observer's request: no command, no ACK, watchdog untouched */
    ck_assert_int_eq(cap.ncmd, 0);
    for (int i = 0; i < cap.nout; i++)
        ck_assert_uint_ne(cap.out[i].h.type, KN_KRP_ACK);
    now += 2000 * MS;
    kn_rules_tick(R, now);
    ck_assert_int_eq(kn_rules_flags(R, now) & KN_KRP_ST_WATCHDOG, 0);
    /* removed: no capability, empty answers */
    ck_assert_int_eq(kn_rules_set_world(R, NULL, 0), 0);
    send_type(KN_KRP_WORLD_REQ, 30, 0);
    ck_assert_uint_eq(last()->u.world.total_len, 0);
}
END_TEST

/* No HELLO needed, and a peer that never said HELLO gets answers too. */
START_TEST(rules_no_hello_needed)
{
    ck_assert_int_eq(kn_rules_set_world(R, "{}", 2), 0);
    send_type(KN_KRP_WORLD_REQ, 1, 0);
    ck_assert_uint_eq(last()->h.type, KN_KRP_WORLD);
    ck_assert_uint_eq(last()->u.world.total_len, 2);
    ck_assert_mem_eq(last()->u.world.data, "{}", 2);
}
END_TEST

/* ---- the document ---------------------------------------------------- */

static char *config_file(const char *rel)
{
    static char path[4][1024];
    static int k;
    const char *dir = getenv("KN_CONFIG_DIR_TEST");
    ck_assert_msg(dir != NULL, "KN_CONFIG_DIR_TEST not set (meson sets it to config/)");
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, rel);
    return path[k];
}

static cJSON *build(const char *backend, const char *robot, const char *terrain, char *note,
                    size_t notelen, char **text)
{
    size_t len = 0;
    char *doc = kn_worlddoc_build(backend, robot, terrain, &len, note, notelen);
    ck_assert_ptr_nonnull(doc);
    ck_assert_uint_eq(len, strlen(doc));
    cJSON *o = cJSON_Parse(doc);
    ck_assert_msg(cJSON_IsObject(o), "not JSON: %.200s", doc);
    ck_assert_msg(strncmp(doc, "{\"generation\":", 14) == 0, "generation not first: %.60s", doc);
    /* generation = FNV-1a of the document without it */
    const char *rest = strchr(doc, ',');
    char *body = malloc(len);
    body[0] = '{';
    memcpy(body + 1, rest + 1, strlen(rest + 1) + 1);
    uint32_t gen = (uint32_t)cJSON_GetObjectItem(o, "generation")->valuedouble;
    ck_assert_uint_eq(gen, kn_worlddoc_hash(body, strlen(body)));
    free(body);
    if (text)
        *text = doc;
    else
        free(doc);
    return o;
}

START_TEST(doc_other_backend)
{
    char note[512];
    cJSON *o = build("standin", NULL, NULL, note, sizeof note, NULL);
    ck_assert_str_eq(note, "");
    ck_assert_str_eq(cJSON_GetObjectItem(o, "backend")->valuestring, "standin");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "terrain")));
    cJSON *robot = cJSON_GetObjectItem(o, "robot");
    ck_assert_str_eq(cJSON_GetObjectItem(robot, "name")->valuestring, "kenaf");
    ck_assert(cJSON_IsObject(cJSON_GetObjectItem(robot, "main_track")));
    ck_assert_ptr_null(cJSON_GetObjectItem(o, "terrain_pose"));
    cJSON_Delete(o);
}
END_TEST

static const cJSON *find_part(const cJSON *parts, const char *kind, const char *tag)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, parts)
    {
        if (strcmp(cJSON_GetObjectItem(p, "kind")->valuestring, kind) == 0 &&
            strcmp(cJSON_GetObjectItem(p, "tag")->valuestring, tag) == 0)
            return p;
    }
    return NULL;
}

/* The step terrain as written, and the engine's box for it: 2 m long
 * from x = 1 (ahead of the robot at the origin), 3 m wide, 0.10 m high. */
START_TEST(doc_engine_step)
{
    char note[512];
    cJSON *o = build("engine", config_file("robots/kenaf.json"), config_file("terrains/step.json"),
                     note, sizeof note, NULL);
    ck_assert_str_eq(note, "");
    cJSON *t = cJSON_GetObjectItem(o, "terrain");
    ck_assert_str_eq(cJSON_GetObjectItem(t, "type")->valuestring, "step");
    ck_assert_double_eq_tol(cJSON_GetObjectItem(t, "height")->valuedouble, 0.10, 1e-12);
    const cJSON *box = find_part(cJSON_GetObjectItem(t, "parts"), "box", "obstacle");
    ck_assert_ptr_nonnull(box);
    const cJSON *c = cJSON_GetObjectItem(box, "c"), *h = cJSON_GetObjectItem(box, "half");
    ck_assert_double_eq_tol(cJSON_GetArrayItem(c, 0)->valuedouble, 2.0, 1e-6);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(h, 0)->valuedouble, 1.0, 1e-6);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(h, 1)->valuedouble, 1.5, 1e-6);
    ck_assert_double_eq_tol(
        cJSON_GetArrayItem(c, 2)->valuedouble + cJSON_GetArrayItem(h, 2)->valuedouble, 0.10, 1e-6);
    ck_assert_ptr_null(cJSON_GetObjectItem(t, "heights"));
    cJSON_Delete(o);
}
END_TEST

/* A heightfield's samples travel with it: bumps.hf is 31 x 21 at 0.1 m. */
START_TEST(doc_engine_heightfield)
{
    char note[512];
    cJSON *o = build("engine", NULL, config_file("terrains/bumps.json"), note, sizeof note, NULL);
    ck_assert_str_eq(note, "");
    cJSON *h = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "terrain"), "heights");
    ck_assert_int_eq(cJSON_GetObjectItem(h, "nx")->valueint, 31);
    ck_assert_int_eq(cJSON_GetObjectItem(h, "ny")->valueint, 21);
    ck_assert_double_eq_tol(cJSON_GetObjectItem(h, "dx")->valuedouble, 0.1, 1e-12);
    cJSON *z = cJSON_GetObjectItem(h, "z");
    ck_assert_int_eq(cJSON_GetArraySize(z), 31 * 21);
    double max = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, z)
    {
        if (e->valuedouble > max)
            max = e->valuedouble;
    }
    ck_assert_msg(max > 0.005 && max <= 0.03, "bumps up to 3 cm, got max %g", max);
    cJSON_Delete(o);
}
END_TEST

/* The families drawn from a seed travel as the boxes the engine built:
 * every part of the terrain, well formed for the page and the cameras
 * (kind, centre, half extents, yaw), the rubble's turned. */
START_TEST(doc_engine_families)
{
    static const char *const names[] = { "rough", "stepfield", "rubble" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char note[512], rel[64], err[512];
        snprintf(rel, sizeof rel, "terrains/%s.json", names[i]);
        struct kn_terrain *t = calloc(1, sizeof *t);
        ck_assert_ptr_nonnull(t);
        ck_assert_msg(kn_terrain_load(config_file(rel), NULL, t, err, sizeof err) == 0, "%s", err);
        char *text;
        cJSON *o = build("engine", NULL, config_file(rel), note, sizeof note, &text);
        ck_assert_str_eq(note, "");
        printf("%s: %d parts, a world description of %zu bytes\n", names[i], t->nparts,
               strlen(text));
        free(text);
        const cJSON *parts = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "terrain"), "parts");
        ck_assert_int_eq(cJSON_GetArraySize(parts), t->nparts);
        int boxes = 0, turned = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, parts)
        {
            const char *kind = cJSON_GetObjectItem(p, "kind")->valuestring;
            if (strcmp(kind, "plane") == 0)
                continue;
            ck_assert_str_eq(kind, "box");
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "c")), 3);
            ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(p, "half")), 3);
            boxes++;
            turned += cJSON_GetObjectItem(p, "yaw")->valuedouble != 0;
        }
        ck_assert_int_eq(boxes, t->nparts - 1);
        if (t->type == KN_TERRAIN_RUBBLE)
            ck_assert_int_eq(turned, boxes);
        cJSON_Delete(o);
        kn_terrain_free(t);
        free(t);
    }
}
END_TEST

/* Same files, same document; another terrain, another generation. */
START_TEST(doc_deterministic)
{
    char note[512], *a, *b, *c;
    cJSON_Delete(build("engine", NULL, config_file("terrains/step.json"), note, sizeof note, &a));
    cJSON_Delete(build("engine", NULL, config_file("terrains/step.json"), note, sizeof note, &b));
    cJSON_Delete(build("engine", NULL, config_file("terrains/stairs.json"), note, sizeof note, &c));
    ck_assert_str_eq(a, b);
    ck_assert_str_ne(a, c);
    ck_assert(strncmp(a, c, 24) != 0); /* the generation differs */
    free(a);
    free(b);
    free(c);
}
END_TEST

/* A file that cannot be read: null in the document, the reason in note. */
START_TEST(doc_missing_files)
{
    char note[1024];
    cJSON *o = build("engine", "/nonexistent/robot.json", "/nonexistent/moon.json", note,
                     sizeof note, NULL);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "terrain")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "robot")));
    ck_assert_msg(strstr(note, "moon.json") && strstr(note, "robot.json"), "note: %s", note);
    cJSON_Delete(o);
}
END_TEST

/* An engine's World answer (usarsim_world.h) with the same files' objects
 * gives the very document the files give; and a heightfield named by the
 * absolute path the engine sends carries its samples. */
START_TEST(doc_from_engine_same)
{
    char note[1024], *from_files, *from_answer;
    cJSON *a = build("engine", config_file("robots/kenaf.json"), config_file("terrains/step.json"),
                     note, sizeof note, &from_files);
    ck_assert_str_eq(note, "");
    char *robot = strdup(h_file_text(config_file("robots/kenaf.json")));
    char *terrain = strdup(h_file_text(config_file("terrains/step.json")));
    /* room for the heightfield's answer below too: an absolute path */
    size_t cap = strlen(robot) + strlen(terrain) + PATH_MAX + 128, len = 0;
    char *answer = malloc(cap);
    snprintf(answer, cap, "{\"terrain\":%s,\"robot\":%s}", terrain, robot);
    from_answer = kn_worlddoc_from_engine("engine", answer, &len, note, sizeof note);
    ck_assert_str_eq(note, "");
    ck_assert_str_eq(from_answer, from_files);
    ck_assert_uint_eq(len, strlen(from_files));
    free(from_answer);
    /* a heightfield's file, absolute */
    char hf[PATH_MAX]; /* realpath writes up to PATH_MAX (checked with _FORTIFY_SOURCE) */
    ck_assert_ptr_nonnull(realpath(config_file("terrains/bumps.hf"), hf));
    snprintf(answer, cap,
             "{\"terrain\":{\"type\":\"heightfield\",\"file\":\"%s\","
             "\"cell_m\":0.1},\"robot\":%s}",
             hf, robot);
    from_answer = kn_worlddoc_from_engine("engine", answer, &len, note, sizeof note);
    ck_assert_str_eq(note, "");
    cJSON *o = cJSON_Parse(from_answer);
    cJSON *h = cJSON_GetObjectItem(cJSON_GetObjectItem(o, "terrain"), "heights");
    ck_assert_int_eq(cJSON_GetObjectItem(h, "nx")->valueint, 31);
    cJSON_Delete(o);
    free(from_answer);
    free(answer);
    free(robot);
    free(terrain);
    free(from_files);
    cJSON_Delete(a);
}
END_TEST

/* An answer that does not read, or that the engine's loaders refuse:
 * that part null (not JSON at all: the default robot), the reason in
 * note. */
START_TEST(doc_from_engine_bad)
{
    static const struct {
        const char *answer, *noted;
        bool robot;
    } bad[] = {
        { "{\"terrain\":", "not JSON", true },
        { "[1,2]", "not an object", true },
        { "{\"terrain\":{\"type\":\"moon\"},\"robot\":{}}", "terrain", false },
        { "{\"terrain\":{\"type\":\"step\",\"height\":-1},\"robot\":{}}", "height", false },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char note[1024];
        size_t len = 0;
        char *doc = kn_worlddoc_from_engine("engine", bad[i].answer, &len, note, sizeof note);
        ck_assert_ptr_nonnull(doc);
        cJSON *o = cJSON_Parse(doc);
        ck_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "terrain")));
        ck_assert_msg(strstr(note, bad[i].noted) != NULL, "%zu: note %s", i, note);
        /* an empty robot object is refused by the robot file's reader */
        ck_assert(cJSON_IsObject(cJSON_GetObjectItem(o, "robot")) == bad[i].robot);
        if (!bad[i].robot)
            ck_assert_msg(strstr(note, "robot") != NULL, "%zu: note %s", i, note);
        cJSON_Delete(o);
        free(doc);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("world");
    TCase *r = tcase_create("rules");
    tcase_add_checked_fixture(r, setup, teardown);
    tcase_add_test(r, rules_without_document);
    tcase_add_test(r, rules_answer_chunks);
    tcase_add_test(r, rules_no_hello_needed);
    suite_add_tcase(s, r);
    TCase *d = tcase_create("document");
    tcase_add_test(d, doc_other_backend);
    tcase_add_test(d, doc_engine_step);
    tcase_add_test(d, doc_engine_heightfield);
    tcase_add_test(d, doc_engine_families);
    tcase_add_test(d, doc_deterministic);
    tcase_add_test(d, doc_missing_files);
    tcase_add_test(d, doc_from_engine_same);
    tcase_add_test(d, doc_from_engine_bad);
    suite_add_tcase(s, d);
    return h_run_suite(s);
}
