/* System tests of many clients on one robot (docs/protocol.md, "Who
 * drives" and "Emergency stop"): a real kenaf-simd with its real engine,
 * plain KRP/1 clients on real sockets. A status display never keeps a
 * controller from driving, a client that said HELLO and left blocks
 * nobody, two active plain controllers do not fight, and the e-stop
 * behaves as stations wired in series: each engager releases its own,
 * and an engagement left behind is reset by the admin over the stats
 * socket. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "harness_suite.h"

static struct h_daemon simd;
static struct h_udp a, b;

static void setup(void)
{
    h_setup();
    h_daemon_start(&simd, "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\","
                          "\"backend\":{\"type\":\"engine\"}}]");
    ck_assert_msg(h_wait_stat(&simd, "robots.0.flags.BACKEND_UP", 1, 3 * H_LONG_MS),
                  "engine never came up: %s", h_stderr(&simd.proc));
    ck_assert(h_wait_stat_eq(&simd, "robots.0.flags.STALE", 0, H_LONG_MS));
    h_udp_open(&a, simd.port[0]);
    h_udp_open(&b, simd.port[0]);
}

static void teardown(void)
{
    h_udp_close(&a);
    h_udp_close(&b);
    h_teardown();
}

#define STAT(path) h_stat(&simd, "robots.0." path)

/* Ground truth x, y of the robot's base in mm. */
static double distance_mm(const struct kn_krp_status *s0, const struct kn_krp_status *s1)
{
    return hypot(s1->pos_mm[0] - s0->pos_mm[0], s1->pos_mm[1] - s0->pos_mm[1]);
}

/* The controller's part: CRAWLER l/r with ACK_REQ every 50 ms for ms,
 * every answer read; returns the ACKs and counts the NOT_OWNER ERRORs.
 * A monitor (if any) asks a STATUS every 500 ms in between. */
static int drive_for(struct h_udp *ctl, struct h_udp *monitor, int ms, int32_t l, int32_t r,
                     int *not_owner)
{
    int acks = 0;
    *not_owner = 0;
    for (int t = 0; t < ms; t += 50) {
        if (monitor && t % 500 == 0)
            h_simple(monitor, 0, KN_KRP_STATUS_REQ, 0);
        h_crawler(ctl, 0, KN_KRP_F_ACK_REQ, l, r);
        struct kn_krp_msg m;
        while (h_udp_recv(ctl, &m, t + 50 < ms ? 50 : 20)) {
            acks += m.h.type == KN_KRP_ACK;
            *not_owner += m.h.type == KN_KRP_ERROR && m.u.error.code == KN_KRP_ERR_NOT_OWNER;
        }
        if (monitor) /* the monitor's STATUS answers */
            while (h_udp_recv(monitor, &m, 0))
                ;
    }
    return acks;
}

/* A plain status display (HELLO, then STATUS_REQ every 0.5 s) and an
 * unchanged controller (HELLO, CRAWLER 200/200 with ACK_REQ for 3 s):
 * every CRAWLER is acknowledged and the robot drives. */
START_TEST(monitor_then_controller)
{
    struct kn_krp_msg m;
    h_hello(&a, "monitor");
    ck_assert(h_udp_recv_answer(&a, &m, H_LONG_MS));
    struct kn_krp_status s0 = h_status(&a);
    h_hello(&b, "controller");
    ck_assert(h_udp_recv_answer(&b, &m, H_LONG_MS));
    int not_owner;
    int acks = drive_for(&b, &a, 3000, 200, 200, &not_owner);
    h_simple(&b, 0, KN_KRP_STOP, 0);
    ck_assert_int_eq(not_owner, 0);
    ck_assert_int_ge(acks, 55); /* of 60: UDP on loopback loses none, late ones are read later */
    h_sleep_ms(300);
    struct kn_krp_status s1 = h_status(&a);
    double d = distance_mm(&s0, &s1);
    printf("monitor_then_controller: driven %.0f mm in 3 s at 200 mm/s, %d ACKs\n", d, acks);
    ck_assert_msg(d >= 400, "the robot moved only %.0f mm", d);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.sessions.driver.name"), "controller");
    ck_assert_double_eq(STAT("sessions.not_owner"), 0);
}
END_TEST

/* A client that says HELLO and exits (a liveness probe) leaves nothing
 * behind: the next controller drives at once. */
START_TEST(hello_only_client_exits)
{
    struct kn_krp_msg m;
    h_hello(&a, "ping");
    ck_assert(h_udp_recv_answer(&a, &m, H_LONG_MS));
    h_udp_close(&a);
    h_udp_open(&a, simd.port[0]);
    h_expect_ack(&b, h_crawler(&b, 0, KN_KRP_F_ACK_REQ, 150, 150), KN_KRP_CRAWLER);
    int not_owner;
    ck_assert_int_ge(drive_for(&b, NULL, 500, 150, 150, &not_owner), 8);
    ck_assert_int_eq(not_owner, 0);
    h_simple(&b, 0, KN_KRP_STOP, 0);
    ck_assert_double_eq(STAT("sessions.not_owner"), 0);
}
END_TEST

/* Two active plain controllers: the second is refused while the first
 * keeps sending, and the robot goes where the first says. */
START_TEST(two_plain_controllers)
{
    h_expect_ack(&a, h_crawler(&a, 0, KN_KRP_F_ACK_REQ, 200, 200), KN_KRP_CRAWLER);
    struct kn_krp_status s0 = h_status(&a);
    int refused = 0;
    for (int t = 0; t < 1500; t += 50) {
        h_crawler(&a, 0, 0, 200, 200);
        h_crawler(&b, 0, 0, -300, 300); /* a turn on the spot */
        struct kn_krp_msg m;
        while (h_udp_recv(&b, &m, 50))
            refused += m.h.type == KN_KRP_ERROR && m.u.error.code == KN_KRP_ERR_NOT_OWNER;
    }
    h_simple(&a, 0, KN_KRP_STOP, 0);
    h_sleep_ms(300);
    struct kn_krp_status s1 = h_status_any(&a);
    /* every one refused and counted; the answers go through the ERROR rate
     * limit (10 a second, a burst of 10) */
    ck_assert_double_eq(STAT("sessions.not_owner"), 30);
    ck_assert_int_ge(refused, 20);
    double yaw = fabs((double)s1.rpy_cdeg[2] - s0.rpy_cdeg[2]) / 100.0;
    printf("two_plain_controllers: %d CRAWLERs of the second refused, %.0f mm straight, yaw %.1f "
           "deg\n",
           refused, distance_mm(&s0, &s1), yaw);
    ck_assert_msg(yaw < 5, "the robot turned %.1f deg", yaw);
    ck_assert_double_ge(distance_mm(&s0, &s1), 150);
}
END_TEST

static struct kn_krp_status status_of(struct h_udp *u)
{
    return h_status_any(u);
}

/* Two stations engage; A's release leaves the robot stopped (B holds);
 * B's frees it. */
START_TEST(estop_two_stations)
{
    struct h_udp c;
    h_udp_open(&c, simd.port[0]);
    h_expect_ack(&c, h_crawler(&c, 0, KN_KRP_F_ACK_REQ, 200, 200), KN_KRP_CRAWLER);
    h_expect_ack(&a, h_estop(&a, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    h_expect_ack(&b, h_estop(&b, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    ck_assert_double_eq(STAT("sessions.estop.engaged"), 2);
    h_expect_ack(&a, h_estop(&a, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    ck_assert(status_of(&c).flags & KN_KRP_ST_ESTOP);
    h_expect_error(&c, KN_KRP_ERR_ESTOP, h_crawler(&c, 0, KN_KRP_F_ACK_REQ, 200, 200),
                   KN_KRP_CRAWLER);
    ck_assert_double_eq(STAT("sessions.estop.engaged"), 1);
    h_expect_error(&a, KN_KRP_ERR_NOT_OWNER, h_estop(&a, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    h_expect_ack(&b, h_estop(&b, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    ck_assert(!(status_of(&c).flags & KN_KRP_ST_ESTOP));
    h_expect_ack(&c, h_crawler(&c, 0, KN_KRP_F_ACK_REQ, 200, 200), KN_KRP_CRAWLER);
    h_simple(&c, 0, KN_KRP_STOP, 0);
    ck_assert_double_eq(STAT("sessions.estop.released"), 2);
    ck_assert_double_eq(STAT("sessions.estop.release_refused"), 1);
    h_udp_close(&c);
}
END_TEST

/* kenaf-simd --command LINE against the test's daemon; its answer (the
 * command exits 0 for an "ok" answer, 1 for a refused one). */
static cJSON *admin(const char *line)
{
    char out[8192], err[2048];
    char *argv[] = { getenv("KN_SIMD"), "--command", (char *)line, "--socket", simd.stats, NULL };
    int rc = h_run(argv, out, sizeof out, err, sizeof err, H_LONG_MS);
    ck_assert_msg(rc == 0 || (rc == 1 && strstr(out, "\"ok\":false")),
                  "kenaf-simd --command \"%s\" failed (%d): %s %s", line, rc, out, err);
    cJSON *j = cJSON_Parse(out);
    ck_assert_msg(j != NULL, "not JSON: %s", out);
    return j;
}

/* An engager that went away leaves its engagement: nobody else may
 * release it; the admin's `estop release ROBOT` resets it, and the daemon
 * logs who asked. */
START_TEST(estop_orphan_admin_reset)
{
    ck_assert_uint_eq(h_hello_session(&b, "station", true), KN_KRP_ROLE_OBSERVER);
    h_expect_ack(&b, h_estop(&b, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    h_expect_ack(&b, h_simple(&b, 0, KN_KRP_BYE, KN_KRP_F_ACK_REQ), KN_KRP_BYE);
    h_udp_close(&b);
    h_udp_open(&b, simd.port[0]);
    ck_assert(h_status(&a).flags & KN_KRP_ST_ESTOP);
    h_expect_error(&a, KN_KRP_ERR_NOT_OWNER, h_estop(&a, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    ck_assert(h_stat(&simd, "robots.0.sessions.estop.by.0.present") == 0);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.sessions.estop.by.0.name"), "station");

    cJSON *j = admin("estop status kenaf");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "estop"), "engaged")->valueint, 1);
    cJSON_Delete(j);
    j = admin("estop release kenaf");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    ck_assert_int_eq(cJSON_GetObjectItem(j, "engaged_before")->valueint, 1);
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "estop"), "engaged")->valueint, 0);
    cJSON_Delete(j);
    ck_assert(!(h_status(&a).flags & KN_KRP_ST_ESTOP));
    h_expect_ack(&a, h_crawler(&a, 0, KN_KRP_F_ACK_REQ, 100, 100), KN_KRP_CRAWLER);
    h_simple(&a, 0, KN_KRP_STOP, 0);
    ck_assert_msg(strstr(h_stderr(&simd.proc), "e-stop reset by uid") != NULL, "not logged: %s",
                  h_stderr(&simd.proc));
    ck_assert_double_eq(STAT("sessions.estop.admin_resets"), 1);

    /* the admin's own engagement, and bad commands */
    j = admin("estop engage kenaf");
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    ck_assert(h_status(&a).flags & KN_KRP_ST_ESTOP);
    ck_assert_str_eq(h_stat_str(&simd, "robots.0.sessions.estop.by.0.kind"), "admin");
    const char *bad[] = { "estop release", "estop release nosuchrobot", "estop hold kenaf",
                          "estop release kenaf extra" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = admin(bad[i]);
        ck_assert_msg(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")), "%s was accepted", bad[i]);
        cJSON_Delete(j);
    }
    ck_assert(h_status(&a).flags & KN_KRP_ST_ESTOP); /* the bad ones changed nothing */
    cJSON_Delete(admin("estop release kenaf"));
    ck_assert(!(h_status(&a).flags & KN_KRP_ST_ESTOP));
}
END_TEST

/* A plain monitor polling in the background while the unchanged square
 * (libkenaf_sim, a session client) drives. */
static atomic_int monitor_run;
static void *monitor(void *arg)
{
    struct h_udp *u = arg;
    struct kn_krp_msg m;
    h_hello(u, "monitor");
    while (atomic_load(&monitor_run)) {
        h_simple(u, 0, KN_KRP_STATUS_REQ, 0);
        while (h_udp_recv(u, &m, 500))
            ;
    }
    return NULL;
}

START_TEST(square_beside_plain_monitor)
{
    pthread_t th;
    atomic_store(&monitor_run, 1);
    ck_assert_int_eq(pthread_create(&th, NULL, monitor, &a), 0);
    h_sleep_ms(200);
    h_run_square(simd.port[0], 120000, NULL);
    atomic_store(&monitor_run, 0);
    pthread_join(th, NULL);
    ck_assert_double_eq(STAT("sessions.not_owner"), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("clients");
    TCase *tc = tcase_create("clients");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, monitor_then_controller);
    tcase_add_test(tc, hello_only_client_exits);
    tcase_add_test(tc, two_plain_controllers);
    tcase_add_test(tc, estop_two_stations);
    tcase_add_test(tc, estop_orphan_admin_reset);
    tcase_add_test(tc, square_beside_plain_monitor);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
