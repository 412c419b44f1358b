/* The whole chain: kenaf-simd spawning the built-in engine, kenaf-view
 * watching it, a raw WebSocket client as the browser. The world the page
 * receives is the engine's terrain; when the daemon dies the page is told
 * the link is down, and when it comes back the states come back. One case
 * per meson test (CK_RUN_CASE). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "view_harness.h"

static struct h_daemon d;
static struct vw_view v;

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(e != NULL, "no \"%s\"", k);
    return e;
}

/* A UDP port free now (bound, read, released), so that a restarted daemon
 * can listen where the first one did. */
static int free_udp_port(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001) };
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static const char *engine_robot(int port, const char *terrain)
{
    static char b[512];
    snprintf(b, sizeof b,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:%d\",\"watchdog_ms\":500,"
             "\"backend\":{\"type\":\"engine\",\"engine\":{\"terrain\":\"%s\"}}}]",
             port, terrain);
    return b;
}

static void view_on(int port)
{
    char spec[64];
    snprintf(spec, sizeof spec, "127.0.0.1:%d", port);
    const char *const args[] = { "--robot", spec, NULL };
    vw_view_start(&v, args);
}

/* The page gets the engine's world: the step terrain as its file says,
 * the obstacle the engine built, the robot file it runs; and states of a
 * robot resting on the ground. */
START_TEST(engine_world)
{
    h_daemon_launch(&d, "kenaf-simd", engine_robot(0, "step"), NULL, NULL, true);
    h_wait_backend_fresh(&d, 0, 3 * H_LONG_MS);
    view_on(d.port[0]);
    struct vw_ws a;
    vw_ws_open(&a, v.port);
    cJSON *w = vw_ws_expect(&a, "world", 3 * H_LONG_MS);
    ck_assert_ptr_nonnull(w);
    const cJSON *world = get(w, "world");
    ck_assert_str_eq(get(world, "backend")->valuestring, "engine");
    const cJSON *t = get(world, "terrain");
    ck_assert_str_eq(get(t, "type")->valuestring, "step");
    bool obstacle = false;
    const cJSON *p;
    cJSON_ArrayForEach(p, get(t, "parts")) obstacle |=
        strcmp(get(p, "tag")->valuestring, "obstacle") == 0;
    ck_assert(obstacle);
    ck_assert(cJSON_IsObject(get(get(world, "robot"), "flipper")));
    ck_assert(get(world, "generation")->valuedouble > 0);
    cJSON_Delete(w);
    cJSON *s = vw_ws_expect(&a, "state", H_LONG_MS);
    ck_assert_ptr_nonnull(s);
    double z = cJSON_GetArrayItem(get(s, "pos"), 2)->valuedouble;
    ck_assert_msg(z > -0.05 && z < 0.3, "robot at z = %g m", z);
    cJSON_Delete(s);
    vw_ws_close(&a, true);
}
END_TEST

/* Next states message (the server's batch of states) or link message,
 * skipping everything else; NULL on timeout. */
static cJSON *next_states_or_link(struct vw_ws *a, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        char *msg = NULL;
        size_t len = 0;
        int op = vw_ws_recv(a, &msg, &len, (int)((end - h_now_us()) / 1000u) + 1);
        if (op <= 0)
            return NULL;
        cJSON *o = cJSON_ParseWithLength(msg, len);
        free(msg);
        const char *type = get(o, "type")->valuestring;
        if (strcmp(type, "states") == 0 || strcmp(type, "link") == 0)
            return o;
        cJSON_Delete(o);
    }
    return NULL;
}

/* kill -9 of the daemon (its engine follows): link up:false within the
 * silence time; the same daemon started again: link up:true, then states
 * again, on the same WebSocket. */
START_TEST(daemon_restart)
{
    int port = free_udp_port();
    h_daemon_launch(&d, "first", engine_robot(port, "flat"), NULL, NULL, true);
    h_wait_backend_fresh(&d, 0, 3 * H_LONG_MS);
    view_on(port);
    struct vw_ws a;
    vw_ws_open(&a, v.port);
    cJSON *s = vw_ws_expect(&a, "state", 3 * H_LONG_MS);
    ck_assert_ptr_nonnull(s);
    cJSON_Delete(s);

    h_signal(&d.proc, SIGKILL);
    ck_assert_int_ne(h_wait_exit(&d.proc, H_LONG_MS), -1);
    uint64_t t_kill = h_now_us();
    cJSON *m;
    while ((m = next_states_or_link(&a, 3 * H_LONG_MS)) != NULL &&
           strcmp(get(m, "type")->valuestring, "link") != 0)
        cJSON_Delete(m);
    ck_assert_msg(m != NULL, "no link message after the daemon died");
    ck_assert(cJSON_IsFalse(get(m, "up")));
    double down_s = (double)(h_now_us() - t_kill) / 1e6;
    printf("link down reported %.2f s after kill -9\n", down_s);
    ck_assert_msg(down_s < 3.0, "link down after %.2f s", down_s);
    cJSON_Delete(m);

    struct h_daemon d2;
    h_daemon_launch(&d2, "second", engine_robot(port, "flat"), NULL, NULL, true);
    m = next_states_or_link(&a, 6 * H_LONG_MS);
    ck_assert_msg(m != NULL, "nothing after the daemon came back");
    ck_assert_str_eq(get(m, "type")->valuestring, "link");
    ck_assert(cJSON_IsTrue(get(m, "up")));
    cJSON_Delete(m);
    m = next_states_or_link(&a, 3 * H_LONG_MS);
    ck_assert_msg(m != NULL, "no state after the link came back");
    ck_assert_str_eq(get(m, "type")->valuestring, "states");
    cJSON_Delete(m);
    ck_assert_double_eq(vw_stat(&v, "robots.0.link.down_events"), 1);
    ck_assert_double_eq(vw_stat(&v, "robots.0.link.up_events"), 2);
    vw_ws_close(&a, true);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "engine-world", engine_world, 100, NULL, NULL },
        { "restart", daemon_restart, 120, NULL, NULL },
    };
    return h_run_cases("view-system", cases, sizeof cases / sizeof cases[0]);
}
