/* System test of the shared key (docs/protocol.md "Extension: shared
 * key"): kenaf-simd with a robot's key_file and the stand-in simulator.
 * The unchanged square controller signs through KENAF_KEY_FILE; unsigned
 * datagrams, a wrong key and a signed datagram sent again are dropped
 * without answer and counted: from the same port, from a new port once its
 * driver has said BYE, after a SIGHUP that restarts the robot with the
 * same key (which keeps the key's replay state: a datagram signed before
 * it still passes once) and after a restart of kenaf-simd; a new key
 * starts afresh. A key file others may read is refused by --check-config. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "cap_harness.h"
#include "harness.h"
#include "harness_suite.h"
#include "krp_mac.h"
#include "pcapng.h"

#define KEY_HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n"
#define KEY2_HEX "02030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021\n"

static struct h_standin sim;
static struct h_daemon d;
static struct kn_krpmac_key key, wrong, key2;
static uint64_t counter;
static char key_path[256]; /* h_path's buffers rotate: a copy */

static void set_key(struct kn_krpmac_key *k, uint8_t first)
{
    uint8_t raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] = (uint8_t)(first + i);
    ck_assert_int_eq(kn_krpmac_key_set(k, raw, sizeof raw), 0);
}

/* The "robots" array: robot kenaf on the stand-in with key_file path and
 * more members (NULL: none). A static buffer. */
static const char *robots_with_key(const char *path, const char *more)
{
    static char robots[1600];
    char extra[600];
    snprintf(extra, sizeof extra, ",\"key_file\":\"%s\"%s", path, more ? more : "");
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, extra));
    return robots;
}

/* The wall clock in microseconds since 1970, which counters follow. */
static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The key file (mode 0600), the stand-in, and kenaf-simd with key_file. */
static void start(void)
{
    snprintf(key_path, sizeof key_path, "%s", h_path("robot.key"));
    h_write_file(key_path, KEY_HEX);
    ck_assert_int_eq(chmod(key_path, 0600), 0);
    set_key(&key, 0);
    set_key(&wrong, 1);
    set_key(&key2, 2);
    counter = 0;

    h_standin_start(&sim, 0, "standin", NULL);
    h_daemon_start(&d, robots_with_key(key_path, NULL));
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
}

/* m encoded and signed with k and the next counter into buf; its length. */
static size_t signed_dgram(const struct kn_krpmac_key *k, const struct kn_krp_msg *m, uint8_t *buf,
                           size_t cap)
{
    size_t n = kn_krp_encode(m, buf, cap);
    ck_assert_uint_gt(n, 0);
    counter = kn_krpmac_counter_next(counter, wall_us());
    n = kn_krpmac_sign(k, counter, buf, n, cap);
    ck_assert_uint_gt(n, 0);
    return n;
}

static void send_signed(struct h_udp *u, const struct kn_krpmac_key *k, uint8_t type, uint32_t seq)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, seq, 0);
    uint8_t buf[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    h_udp_raw(u, buf, signed_dgram(k, &m, buf, sizeof buf));
}

/* The next datagram within timeout_ms, which must carry a trailer of key
 * k; decoded into m. false on timeout. */
static bool recv_signed_by(const struct kn_krpmac_key *k, struct h_udp *u, struct kn_krp_msg *m,
                           int timeout_ms)
{
    if (!h_wait_readable(u->fd, h_now_us() + (uint64_t)timeout_ms * 1000u))
        return false;
    uint8_t buf[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    ssize_t r = recv(u->fd, buf, sizeof buf, 0);
    ck_assert_int_gt(r, 0);
    size_t n = (size_t)r;
    uint64_t ctr = 0;
    enum kn_krpmac_verdict v = kn_krpmac_verify(k, buf, &n, &ctr);
    ck_assert_msg(v == KN_KRPMAC_OK, "answer from the robot: shared key %s",
                  kn_krpmac_verdict_name(v));
    ck_assert_int_eq(kn_krp_decode(buf, n, m), KN_KRP_OK);
    return true;
}

static bool recv_signed(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms)
{
    return recv_signed_by(&key, u, m, timeout_ms);
}

/* m signed into buf (cap bytes) and sent from u; its ACK must come back,
 * signed. Returns the signed length: buf keeps the bytes, for a replay. */
static size_t send_acked(struct h_udp *u, const struct kn_krp_msg *m, uint8_t *buf, size_t cap)
{
    size_t n = signed_dgram(&key, m, buf, cap);
    h_udp_raw(u, buf, n);
    struct kn_krp_msg ans;
    ck_assert(recv_signed(u, &ans, 3000));
    ck_assert_uint_eq(ans.h.type, KN_KRP_ACK);
    ck_assert_uint_eq(ans.u.ack.acked_seq, m->h.seq);
    return n;
}

/* Nothing answered what went before: a signed STATUS_REQ's STATUS is the
 * very next datagram (loopback keeps order). */
static void expect_silence(struct h_udp *u)
{
    send_signed(u, &key, KN_KRP_STATUS_REQ, ++u->seq);
    struct kn_krp_msg m;
    ck_assert_msg(recv_signed(u, &m, 3000), "no STATUS for a signed STATUS_REQ");
    ck_assert_uint_eq(m.h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(m.u.status.req_seq, u->seq);
}

START_TEST(square_signs_through_the_library)
{
    start();
    setenv("KENAF_KEY_FILE", key_path, 1);
    h_run_square(d.port[0], 60000, h_stderr(&d.proc));
    unsetenv("KENAF_KEY_FILE");
    ck_assert_double_ge(h_stat(&d, "robots.0.keys.accepted"), 10);
    ck_assert_double_ge(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 8);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.missing"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.bad"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.replayed"), 0);
}
END_TEST

START_TEST(unsigned_and_wrong_key_dropped)
{
    start();
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    /* plain KRP/1: no answer at all */
    h_simple(&u, 0, KN_KRP_STATUS_REQ, 0);
    h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 300, -300);
    ck_assert(h_wait_stat(&d, "robots.0.keys.missing", 2, 3000));
    expect_silence(&u);
    /* another key: dropped as bad, still no answer */
    send_signed(&u, &wrong, KN_KRP_STATUS_REQ, ++u.seq);
    ck_assert(h_wait_stat(&d, "robots.0.keys.bad", 1, 3000));
    expect_silence(&u);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.missing"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.bad"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.accepted"), 2);
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 0);
    h_udp_close(&u);
}
END_TEST

/* The inbound UDP payloads of the capture at path whose comment is note:
 * how many, and the first one's bytes into buf (its length in *len). */
static int captured_with_note(const char *path, const char *note, uint8_t *buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t file[1 << 20];
    size_t n = fread(file, 1, sizeof file, f);
    fclose(f);
    struct kn_pcap_reader r;
    kn_pcap_reader_init(&r);
    int found = 0;
    size_t off = 0;
    while (off < n) {
        size_t used;
        struct kn_pcap_packet p;
        enum kn_pcap_result res = kn_pcap_next(&r, file + off, n - off, &used, &p);
        ck_assert(res == KN_PCAP_PACKET || res == KN_PCAP_BLOCK);
        off += used;
        struct kn_pcap_ip ip;
        if (res != KN_PCAP_PACKET || p.dir != KN_PCAPNG_DIR_IN || !p.comment ||
            p.comment_len != strlen(note) || memcmp(p.comment, note, p.comment_len) != 0 ||
            kn_pcap_decode(p.linktype, p.data, p.caplen, &ip) != KN_PCAP_DEC_OK ||
            ip.proto != KN_IP_PROTO_UDP)
            continue;
        if (found++ == 0) {
            memcpy(buf, ip.payload, ip.payload_len);
            *len = ip.payload_len;
        }
    }
    return found;
}

START_TEST(replayed_datagram_not_applied)
{
    start();
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    struct kn_krp_msg m;
    uint8_t first[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER], buf[sizeof first];
    kn_krp_init(&m, KN_KRP_CRAWLER, ++u.seq, KN_KRP_F_ACK_REQ);
    m.u.crawler.left_mm_s = 300;
    m.u.crawler.right_mm_s = -300;
    size_t first_len = send_acked(&u, &m, first, sizeof first);
    int go = h_wait_belts(sim.log, 0, 0.3, -0.3, 5000, NULL);
    ck_assert_int_ge(go, 0);
    /* then a stop, so the replayed set-point would show if applied */
    kn_krp_init(&m, KN_KRP_CRAWLER, ++u.seq, KN_KRP_F_ACK_REQ);
    send_acked(&u, &m, buf, sizeof buf);
    int stop = h_wait_belts(sim.log, go + 1, 0, 0, 5000, NULL);
    ck_assert_int_ge(stop, 0);
    double crawlers = h_stat(&d, "robots.0.datagrams_in.CRAWLER");
    ck_assert(strstr(c_command(&d, "capture start replayed.pcapng"), "\"active\":true"));

    /* the first datagram again, same bytes, same port */
    h_udp_raw(&u, first, first_len);
    ck_assert(h_wait_stat(&d, "robots.0.keys.replayed", 1, 3000));
    /* kept as it arrived: signed, trailer and all */
    ck_assert(strstr(c_command(&d, "capture stop"), "\"ok\":true"));
    ck_assert(c_capture_closed(&d, H_LONG_MS));
    size_t kept_len = 0;
    ck_assert_int_eq(captured_with_note(h_path("replayed.pcapng"), "shared key: replayed, dropped",
                                        buf, &kept_len),
                     1);
    ck_assert_uint_eq(kept_len, first_len);
    ck_assert_mem_eq(buf, first, first_len);
    expect_silence(&u);
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), crawlers);
    h_sleep_ms(300);
    ck_assert_int_eq(h_wait_belts(sim.log, stop + 1, 0.3, -0.3, 0, NULL), -1);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.replayed"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.bad"), 0);
    h_udp_close(&u);
}
END_TEST

/* A signed CRAWLER at 250 mm/s from a fresh port, its ACK, the belts
 * moving, a signed STOP and a signed BYE (both ACKed): the datagram
 * recorded by someone on the network, and a robot nobody drives. The
 * CRAWLER's bytes go to buf (*len); returns the index of the stop in the
 * stand-in's log. */
static int drive_and_leave(int port, uint8_t *buf, size_t cap, size_t *len)
{
    struct h_udp a;
    h_udp_open(&a, port);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, ++a.seq, KN_KRP_F_ACK_REQ);
    m.u.crawler.left_mm_s = 250;
    m.u.crawler.right_mm_s = 250;
    *len = send_acked(&a, &m, buf, cap);
    int go = h_wait_belts(sim.log, 0, 0.25, 0.25, 5000, NULL);
    ck_assert_int_ge(go, 0);
    uint8_t out[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    kn_krp_init(&m, KN_KRP_STOP, ++a.seq, KN_KRP_F_ACK_REQ);
    send_acked(&a, &m, out, sizeof out);
    int stop = h_wait_belts(sim.log, go + 1, 0, 0, 5000, NULL);
    ck_assert_int_ge(stop, 0);
    kn_krp_init(&m, KN_KRP_BYE, ++a.seq, KN_KRP_F_ACK_REQ);
    send_acked(&a, &m, out, sizeof out);
    h_udp_close(&a);
    return stop;
}

/* The recorded CRAWLER sent from a new port: dropped without answer and
 * counted as `stat` (robot 0's keys.<stat>), never a CRAWLER to the
 * rules, and the belts stay still. */
static void replay_refused(int port, const uint8_t *buf, size_t len, int stop, const char *stat)
{
    char path[64];
    snprintf(path, sizeof path, "robots.0.keys.%s", stat);
    double before = h_stat(&d, path);
    double crawlers = h_stat(&d, "robots.0.datagrams_in.CRAWLER");
    struct h_udp b;
    h_udp_open(&b, port);
    h_udp_raw(&b, buf, len);
    ck_assert_msg(h_wait_stat(&d, path, before + 1, 3000), "%s stays %.0f", path, before);
    expect_silence(&b); /* no ACK came before the STATUS */
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), crawlers);
    /* a quarter of a second is many stand-in periods: a relayed 0.25
     * would be in the log by now */
    h_sleep_ms(250);
    ck_assert_int_eq(h_wait_belts(sim.log, stop + 1, 0.25, 0.25, 0, NULL), -1);
    ck_assert_double_eq(h_stat(&d, path), before + 1);
    h_udp_close(&b);
}

START_TEST(replay_from_new_port_after_bye)
{
    start();
    uint8_t rec[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    size_t rec_len = 0;
    int stop = drive_and_leave(d.port[0], rec, sizeof rec, &rec_len);
    replay_refused(d.port[0], rec, rec_len, stop, "replayed");
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.held"), 4); /* 3 + expect_silence's */
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.too_old"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.too_new"), 0);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.below_floor"), 0);
}
END_TEST

/* The robot's port after a reload or a restart (the config listens on
 * port 0: a restarted robot binds another). */
static int robot_port(struct h_daemon *dd)
{
    return atoi(strrchr(h_stat_str(dd, "robots.0.listen"), ':') + 1);
}

/* A SIGHUP with the robot's config changed (so it is stopped and started
 * again) and the key file unchanged keeps the key's replay state; a new
 * key file then starts a fresh state whose floor is the reload. */
START_TEST(replay_refused_across_reload)
{
    start();
    uint8_t rec[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    size_t rec_len = 0;
    int stop = drive_and_leave(d.port[0], rec, sizeof rec, &rec_len);
    double floor = h_stat(&d, "robots.0.keys.floor_us");
    ck_assert_double_gt(floor, 0);
    /* signed now, sent only after the reload */
    struct kn_krp_msg m, ans;
    uint8_t early[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    kn_krp_init(&m, KN_KRP_STATUS_REQ, 4242, 0);
    size_t early_len = signed_dgram(&key, &m, early, sizeof early);

    h_daemon_write_config(&d, robots_with_key(key_path, ",\"limits\":{\"max_speed_mm_s\":500}"));
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat(&d, "reloads", 1, H_LONG_MS));
    ck_assert_ptr_nonnull(strstr(h_stderr(&d.proc), "config changed, restarting"));
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    int port = robot_port(&d);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.accepted"), 0);     /* a new robot */
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.floor_us"), floor); /* the same filter */
    replay_refused(port, rec, rec_len, stop, "replayed");
    struct h_udp u;
    h_udp_open(&u, port);
    h_udp_raw(&u, early, early_len);
    ck_assert(recv_signed(&u, &ans, 3000));
    ck_assert_uint_eq(ans.h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(ans.u.status.req_seq, 4242);
    h_udp_raw(&u, early, early_len); /* and only once */
    ck_assert(h_wait_stat(&d, "robots.0.keys.replayed", 2, 3000));
    h_udp_close(&u);

    /* another key: a fresh state, nothing signed before the reload */
    char path2[256];
    snprintf(path2, sizeof path2, "%s", h_path("robot2.key"));
    h_write_file(path2, KEY2_HEX);
    ck_assert_int_eq(chmod(path2, 0600), 0);
    kn_krp_init(&m, KN_KRP_STATUS_REQ, 4343, 0);
    size_t early2_len = signed_dgram(&key2, &m, early, sizeof early);
    int64_t t_reload = wall_us();
    h_daemon_write_config(&d, robots_with_key(path2, ",\"limits\":{\"max_speed_mm_s\":500}"));
    h_signal(&d.proc, SIGHUP);
    ck_assert(h_wait_stat(&d, "reloads", 2, H_LONG_MS));
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_ge(h_stat(&d, "robots.0.keys.floor_us"), (double)t_reload);
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.held"), 0);
    port = robot_port(&d);
    h_udp_open(&u, port);
    h_udp_raw(&u, early, early2_len);
    ck_assert(h_wait_stat(&d, "robots.0.keys.below_floor", 1, 3000));
    send_signed(&u, &key2, KN_KRP_STATUS_REQ, 4444);
    ck_assert(recv_signed_by(&key2, &u, &ans, 3000));
    ck_assert_uint_eq(ans.h.type, KN_KRP_STATUS);
    ck_assert_uint_eq(ans.u.status.req_seq, 4444); /* nothing came before it */
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.accepted"), 1);
    h_udp_close(&u);
}
END_TEST

/* kenaf-simd stopped and started again (no state kept): what was
 * recorded before is below the new start's floor. */
START_TEST(replay_refused_after_restart)
{
    start();
    uint8_t rec[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    size_t rec_len = 0;
    int stop = drive_and_leave(d.port[0], rec, sizeof rec, &rec_len);
    h_signal(&d.proc, SIGTERM);
    ck_assert_msg(h_wait_exit(&d.proc, H_LONG_MS) != -1, "kenaf-simd did not exit on SIGTERM");
    int64_t t_restart = wall_us();
    h_daemon_launch(&d, "again", robots_with_key(key_path, NULL), NULL, NULL, true);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert_double_ge(h_stat(&d, "robots.0.keys.floor_us"), (double)t_restart);
    replay_refused(d.port[0], rec, rec_len, stop, "below_floor");
    ck_assert_double_eq(h_stat(&d, "robots.0.keys.replayed"), 0);
}
END_TEST

START_TEST(key_readable_by_others_refused)
{
    snprintf(key_path, sizeof key_path, "%s", h_path("open.key"));
    h_write_file(key_path, KEY_HEX);
    ck_assert_int_eq(chmod(key_path, 0644), 0);
    char cfg[256], extra[400], text[2048];
    snprintf(cfg, sizeof cfg, "%s", h_path("keyed.json"));
    snprintf(extra, sizeof extra, ",\"key_file\":\"%s\"", key_path);
    snprintf(text, sizeof text, "{\"robots\": [%s]}\n", h_standin_robot("kenaf", 9, extra));
    h_write_file(cfg, text);
    const char *simd = getenv("KN_SIMD");
    ck_assert_ptr_nonnull(simd);
    char *argv[] = { (char *)simd, "--check-config", "--config", cfg, NULL };
    static char out[4096], err[8192];
    ck_assert_int_eq(h_run(argv, out, sizeof out, err, sizeof err, 20000), 1);
    ck_assert_msg(strstr(err, key_path) && strstr(err, "0644") && strstr(err, "key_file"), "%s",
                  err);
    /* the same file at 0600 passes */
    ck_assert_int_eq(chmod(key_path, 0600), 0);
    ck_assert_msg(h_run(argv, out, sizeof out, err, sizeof err, 20000) == 0, "%s", err);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("shared key against kenaf-simd");
    TCase *tc = tcase_create("keys");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, square_signs_through_the_library);
    tcase_add_test(tc, unsigned_and_wrong_key_dropped);
    tcase_add_test(tc, replayed_datagram_not_applied);
    tcase_add_test(tc, replay_from_new_port_after_bye);
    tcase_add_test(tc, replay_refused_across_reload);
    tcase_add_test(tc, replay_refused_after_restart);
    tcase_add_test(tc, key_readable_by_others_refused);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
