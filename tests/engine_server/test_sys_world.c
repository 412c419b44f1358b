/* The world description of an engine kenaf-simd reaches at an address:
 * a real kenaf-engine runs a terrain the daemon cannot know from any file
 * it has (a step of a height no terrain file in the data folder has, or a
 * judged scenario's variant, which changes the terrain beyond its file);
 * kenaf-simd asks it (KENAF {Cmd World}) once the link is up, and a KRP/1
 * client's WORLD_REQ gets a description whose terrain has the height the
 * engine runs, in its parameters and in the boxes the engine collides
 * with; when another client changes the engine's terrain, the engine
 * sends the World again and the description follows. An engine that
 * sends an answer that does not read leaves the description without
 * terrain, warned and counted. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "eng_client.h"
#include "harness.h"

static struct h_daemon d;
static struct ec_engine eng;

/* The whole description, chunk by chunk (WORLD_REQ at each offset). */
static cJSON *fetch_world(int port)
{
    struct h_udp u;
    h_udp_open(&u, port);
    char *doc = NULL;
    uint32_t total = 0, have = 0;
    do {
        struct kn_krp_msg m = {
            .h = { .version = KN_KRP_VERSION, .type = KN_KRP_WORLD_REQ, .seq = ++u.seq }
        };
        m.u.world_req.offset = have;
        h_udp_send(&u, &m);
        struct kn_krp_msg a;
        do
            ck_assert_msg(h_udp_recv_answer(&u, &a, H_LONG_MS), "no WORLD answer");
        while (a.h.type != KN_KRP_WORLD);
        if (!doc) {
            total = a.u.world.total_len;
            ck_assert_uint_gt(total, 0);
            doc = calloc(1, total + 1);
            ck_assert_ptr_nonnull(doc);
        }
        ck_assert_uint_eq(a.u.world.total_len, total);
        ck_assert_uint_eq(a.u.world.offset, have);
        ck_assert_uint_gt(a.u.world.n, 0);
        memcpy(doc + have, a.u.world.data, a.u.world.n);
        have += a.u.world.n;
    } while (have < total);
    h_udp_close(&u);
    cJSON *o = cJSON_Parse(doc);
    ck_assert_msg(o != NULL, "not JSON: %.200s", doc);
    free(doc);
    return o;
}

/* The obstacle box's top [m], checked against the terrain's "height". */
static double step_top(const cJSON *terrain)
{
    ck_assert_msg(cJSON_IsObject(terrain), "no terrain in the description");
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(terrain, "parts");
    double top = NAN;
    const cJSON *p;
    cJSON_ArrayForEach(p, parts)
    {
        const cJSON *tag = cJSON_GetObjectItemCaseSensitive(p, "tag");
        if (!cJSON_IsString(tag) || strcmp(tag->valuestring, "obstacle") != 0)
            continue;
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(p, "c");
        const cJSON *h = cJSON_GetObjectItemCaseSensitive(p, "half");
        top = cJSON_GetArrayItem(c, 2)->valuedouble + cJSON_GetArrayItem(h, 2)->valuedouble;
    }
    ck_assert_msg(isfinite(top), "no obstacle box in the terrain's parts");
    return top;
}

static void start_daemon_at(int port)
{
    char robots[256];
    snprintf(robots, sizeof robots,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"backend\":{\"type\":"
             "\"engine\",\"address\":\"127.0.0.1:%d\"}}]",
             port);
    h_daemon_start(&d, robots);
    ck_assert(h_wait_stat(&d, "robots.0.flags.BACKEND_UP", 1, 3 * H_LONG_MS));
}

/* A step 0.137 m high (the data folder's step is 0.10 m). */
START_TEST(world_from_address)
{
    const char *terrain = h_path("step137.json");
    h_write_file(terrain, "{\"type\":\"step\",\"height\":0.137,\"edge_x\":1.0,\"length\":2.0,"
                          "\"span_y\":3.0}\n");
    const char *extra[] = { "--terrain", terrain, NULL };
    ec_engine_start(&eng, extra);
    start_daemon_at(eng.port);
    ck_assert(h_wait_stat(&d, "robots.0.rules.world_answers", 1, 3 * H_LONG_MS));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.world_asked"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.world_answers"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.world_bad"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.rules.world_answers_bad"), 0);
    cJSON *w = fetch_world(d.port[0]);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "terrain");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(w, "backend")->valuestring, "engine");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(t, "type")->valuestring, "step");
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(t, "height")->valuedouble, 0.137,
                            1e-9);
    ck_assert_double_eq_tol(step_top(t), 0.137, 1e-6);
    /* the robot file the engine runs */
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(w, "robot");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "name")->valuestring, "kenaf");
    cJSON_Delete(w);

    /* another client changes the terrain: the engine tells the daemon,
     * whose description follows without a reconnect (the data folder's
     * step is 0.10 m high) */
    struct ec_conn *c = calloc(1, sizeof *c);
    ck_assert_ptr_nonnull(c);
    ec_connect(c, eng.port);
    ec_send(c, "KENAF {Cmd Terrain} {Name step}\r\n");
    ck_assert_msg(ec_wait_kenaf(c, "Terrain", H_LONG_MS), "no Terrain answer");
    ck_assert_msg(strstr(c->last, "{Status OK}"), "%s", c->last);
    ec_close(c);
    free(c);
    ck_assert(h_wait_stat(&d, "robots.0.rules.world_answers", 2, 3 * H_LONG_MS));
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.world_asked"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.backend.engine.world_bad"), 0);
    w = fetch_world(d.port[0]);
    t = cJSON_GetObjectItemCaseSensitive(w, "terrain");
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(t, "height")->valuedouble, 0.10, 1e-9);
    ck_assert_double_eq_tol(step_top(t), 0.10, 1e-6);
    cJSON_Delete(w);
}
END_TEST

/* A heightfield whose samples file the daemon cannot read (as on another
 * host: here it is gone once the engine has read it): the World carries
 * the samples, so the description still has the ground the engine runs. */
START_TEST(world_heightfield_elsewhere)
{
    const char *samples = h_path("hills.hf"), *terrain = h_path("hills.json");
    h_write_file(samples, "0 0 0 0\n0 0.05 0.1 0\n0 0.1 0.2 0\n0 0 0 0\n");
    h_write_file(terrain, "{\"type\":\"heightfield\",\"file\":\"hills.hf\",\"cell_m\":0.5,"
                          "\"pose\":[3,0,0]}\n");
    const char *extra[] = { "--terrain", terrain, NULL };
    ec_engine_start(&eng, extra);
    ck_assert_int_eq(unlink(samples), 0);
    start_daemon_at(eng.port);
    ck_assert(h_wait_stat(&d, "robots.0.rules.world_answers", 1, 3 * H_LONG_MS));
    ck_assert_double_eq(h_stat(&d, "robots.0.rules.world_answers_bad"), 0);
    cJSON *w = fetch_world(d.port[0]);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "terrain");
    ck_assert_msg(cJSON_IsObject(t), "no terrain in the description");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(t, "type")->valuestring, "heightfield");
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(t, "samples");
    ck_assert_int_eq(cJSON_GetArraySize(rows), 4);
    ck_assert_double_eq_tol(cJSON_GetArrayItem(cJSON_GetArrayItem(rows, 2), 2)->valuedouble, 0.2,
                            1e-12);
    cJSON_Delete(w);
}
END_TEST

/* A judged scenario's variant: the terrain file's step is 0.10 m at
 * edge_x 1, the scenario's 0.2 m at edge_x 0, its variant 2's 0.25 m. */
START_TEST(world_of_variant)
{
    char scen[512];
    snprintf(scen, sizeof scen, "%s/scenarios/ci/climb-step.json", getenv("KN_CONFIG_DIR"));
    const char *extra[] = { "--pace",
                            "step",
                            "--judge",
                            scen,
                            "--judge-variant",
                            "2",
                            "--judge-verdict",
                            h_path("verdict.txt"),
                            NULL };
    ec_engine_start(&eng, extra);
    start_daemon_at(eng.port);
    ck_assert(h_wait_stat(&d, "robots.0.rules.world_answers", 1, 3 * H_LONG_MS));
    cJSON *w = fetch_world(d.port[0]);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(w, "terrain");
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(t, "height")->valuedouble, 0.25, 1e-9);
    ck_assert_double_eq_tol(cJSON_GetObjectItemCaseSensitive(t, "edge_x")->valuedouble, 0.0, 1e-9);
    ck_assert_double_eq_tol(step_top(t), 0.25, 1e-6);
    cJSON_Delete(w);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "address", world_from_address, 60, NULL, NULL },
        { "variant", world_of_variant, 60, NULL, NULL },
        { "heightfield", world_heightfield_elsewhere, 60, NULL, NULL },
    };
    return h_run_cases("the world of an engine at an address", cases,
                       sizeof cases / sizeof cases[0]);
}
