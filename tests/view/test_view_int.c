/* kenaf-view against kenaf-simd and the stand-in simulator, over real
 * sockets: a raw WebSocket client (view_harness.h) plays the browser.
 * What a page receives (hello, link, world, states), the HTTP paths, that
 * the view only observes (the daemon's capture of its datagrams), bad
 * input (malformed and oversized frames), slow clients and many
 * connections (RSS before and after), the client limits, a robot without
 * the world extension, and the daemon's WORLD_REQ answers themselves.
 * One case per meson test (CK_RUN_CASE). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "pcapng.h"
#include "view_harness.h"

static struct h_standin sim;
static struct h_daemon d;
static struct vw_view v;

static const char *robots1(const char *r)
{
    static char b[1200];
    snprintf(b, sizeof b, "[%s]", r);
    return b;
}

/* kenaf-simd with the stand-in (extra daemon arguments may be NULL). */
static void daemon_up(const char *const args[])
{
    h_standin_start(&sim, 0, "sim", NULL);
    h_daemon_launch(&d, "kenaf-simd", robots1(h_standin_robot("kenaf", sim.port, NULL)), args, NULL,
                    true);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
}

/* kenaf-view watching the daemon's robot `copies` times (1..8), and args. */
static void view_up(int copies, const char *const args[])
{
    static char spec[8][64];
    const char *a[32];
    int n = 0;
    for (int i = 0; i < copies; i++) {
        snprintf(spec[i], sizeof spec[i], "127.0.0.1:%d", d.port[0]);
        a[n++] = "--robot";
        a[n++] = spec[i];
    }
    for (int i = 0; args && args[i] && n < 31; i++)
        a[n++] = args[i];
    a[n] = NULL;
    vw_view_start(&v, a);
}

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(o, k);
    ck_assert_msg(e != NULL, "no \"%s\"", k);
    return e;
}

/* hello, then the robot's link and world, then states with growing seq. */
static void expect_stream(struct vw_ws *w, int nstates)
{
    cJSON *h = vw_ws_expect(w, "hello", H_LONG_MS);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(cJSON_GetArraySize(get(h, "robots")), 1);
    cJSON_Delete(h);
    cJSON *l = vw_ws_expect(w, "link", H_LONG_MS);
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(get(l, "robot")->valueint, 0);
    cJSON_Delete(l);
    cJSON *wd = vw_ws_expect(w, "world", H_LONG_MS);
    ck_assert_ptr_nonnull(wd);
    const cJSON *world = get(wd, "world");
    ck_assert_str_eq(get(world, "backend")->valuestring, "standin");
    ck_assert(cJSON_IsNull(get(world, "terrain")));
    ck_assert_str_eq(get(get(world, "robot"), "name")->valuestring, "kenaf");
    cJSON_Delete(wd);
    double seq = 0;
    for (int i = 0; i < nstates; i++) {
        cJSON *s = vw_ws_expect(w, "state", H_LONG_MS);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(cJSON_GetArraySize(get(s, "pos")), 3);
        ck_assert_int_eq(cJSON_GetArraySize(get(s, "flippers")), 4);
        ck_assert(cJSON_IsTrue(get(get(s, "flags"), "BACKEND_UP")));
        ck_assert(get(s, "seq")->valuedouble > seq);
        seq = get(s, "seq")->valuedouble;
        cJSON_Delete(s);
    }
}

/* ---- what a page gets ------------------------------------------------ */

START_TEST(pages)
{
    daemon_up(NULL);
    view_up(1, NULL);
    static char body[1 << 21];
    char ctype[128];
    ck_assert_int_eq(vw_http_get(v.port, "/", body, sizeof body, ctype, sizeof ctype), 200);
    ck_assert_str_eq(ctype, "text/html; charset=utf-8");
    ck_assert_ptr_nonnull(strstr(body, "<html"));
    ck_assert_int_eq(vw_http_get(v.port, "/app/main.js", body, sizeof body, ctype, sizeof ctype),
                     200);
    ck_assert_ptr_nonnull(strstr(ctype, "text/javascript"));
    ck_assert_int_eq(
        vw_http_get(v.port, "/three/build/three.module.js", body, sizeof body, ctype, sizeof ctype),
        200);
    ck_assert_ptr_nonnull(strstr(ctype, "text/javascript"));
    ck_assert_int_eq(vw_http_get(v.port, "/nothing", body, sizeof body, NULL, 0), 404);
    ck_assert_int_eq(vw_http_get(v.port, "/three/", body, sizeof body, NULL, 0), 404);
    ck_assert_int_eq(vw_http_get(v.port, "/app/.hidden", body, sizeof body, NULL, 0), 403);
    ck_assert_int_ne(vw_http_get(v.port, "/app/../../../etc/passwd", body, sizeof body, NULL, 0),
                     200);
    ck_assert_int_ne(vw_http_get(v.port, "/three/%2e%2e/%2e%2e/passwd", body, sizeof body, NULL, 0),
                     200);
    ck_assert_int_eq(vw_http_method(v.port, "POST", "/api/stats"), 405);

    /* two browsers at once, each gets the whole stream */
    struct vw_ws a, b;
    vw_ws_open(&a, v.port);
    vw_ws_open(&b, v.port);
    expect_stream(&a, 25);
    expect_stream(&b, 25);
    ck_assert_int_eq(vw_http_get(v.port, "/api/robots", body, sizeof body, ctype, sizeof ctype),
                     200);
    ck_assert_str_eq(ctype, "application/json");
    cJSON *r = cJSON_Parse(body);
    const cJSON *r0 = cJSON_GetArrayItem(get(r, "robots"), 0);
    ck_assert_str_eq(get(r0, "name")->valuestring, "kenaf"); /* from HELLO_ACK */
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", d.port[0]);
    ck_assert_str_eq(get(r0, "address")->valuestring, addr);
    cJSON_Delete(r);
    ck_assert_double_eq(vw_stat(&v, "clients"), 2);
    vw_ws_close(&a, true);
    vw_ws_close(&b, false);
    ck_assert(vw_wait_stat(&v, "ws.closed_by_peer", 1, H_LONG_MS));
    ck_assert(vw_wait_stat(&v, "ws.closed_abrupt", 1, H_LONG_MS));
    ck_assert_double_eq(vw_stat(&v, "clients"), 0);
    ck_assert_double_ge(vw_stat(&v, "frames_out.state"), 50);
}
END_TEST

/* ---- it only observes ------------------------------------------------ */

/* The daemon's own capture of every datagram it received while a browser
 * watched: HELLO, SUBSCRIBE, STATUS_REQ and WORLD_REQ, nothing else. */
START_TEST(observer_only)
{
    /* a copy: h_path's buffers are reused by the daemon's start-up below */
    static char cap[300];
    snprintf(cap, sizeof cap, "%s", h_path("view.pcapng"));
    const char *const args[] = { "--capture", cap, NULL };
    daemon_up(args);
    view_up(1, NULL);
    struct vw_ws a;
    vw_ws_open(&a, v.port);
    cJSON *s = vw_ws_expect(&a, "state", H_LONG_MS);
    ck_assert_ptr_nonnull(s);
    cJSON_Delete(s);
    ck_assert(vw_wait_stat(&v, "robots.0.krp_sent.SUBSCRIBE", 3, 4 * H_LONG_MS));
    vw_ws_close(&a, true);
    h_signal(&d.proc, SIGTERM);
    ck_assert_int_ne(h_wait_exit(&d.proc, H_LONG_MS), -1);

    FILE *f = fopen(cap, "rb");
    ck_assert_msg(f != NULL, "no capture at %s", cap);
    static uint8_t buf[8 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct kn_pcap_reader rd;
    kn_pcap_reader_init(&rd);
    size_t off = 0, used = 0;
    unsigned count[256] = { 0 }, total = 0;
    struct kn_pcap_packet pkt;
    enum kn_pcap_result res;
    while ((res = kn_pcap_next(&rd, buf + off, len - off, &used, &pkt)) == KN_PCAP_PACKET ||
           res == KN_PCAP_BLOCK) {
        off += used;
        struct kn_pcap_ip ip;
        if (res != KN_PCAP_PACKET ||
            kn_pcap_decode(pkt.linktype, pkt.data, pkt.caplen, &ip) != KN_PCAP_DEC_OK ||
            ip.proto != KN_IP_PROTO_UDP || ip.dport != d.port[0])
            continue;
        ck_assert_uint_ge(ip.payload_len, 4);
        count[ip.payload[3]]++;
        total++;
    }
    ck_assert_uint_gt(total, 0);
    ck_assert_uint_ge(count[KN_KRP_HELLO], 1);
    ck_assert_uint_ge(count[KN_KRP_SUBSCRIBE], 3);
    ck_assert_uint_ge(count[KN_KRP_WORLD_REQ], 1);
    ck_assert_uint_eq(count[KN_KRP_HELLO] + count[KN_KRP_SUBSCRIBE] + count[KN_KRP_STATUS_REQ] +
                          count[KN_KRP_WORLD_REQ],
                      total);
}
END_TEST

/* ---- bad input ------------------------------------------------------- */

/* Each frame on a connection of its own: the server must end it. */
static void refused(uint8_t b0, bool mask, uint64_t declared, const void *p, size_t len,
                    const char *what)
{
    struct vw_ws w;
    vw_ws_open(&w, v.port);
    vw_ws_frame(&w, b0, mask, declared, p, len);
    ck_assert_msg(vw_ws_ended(&w, H_LONG_MS), "kenaf-view kept a connection after %s", what);
    vw_ws_close(&w, false);
}

START_TEST(malformed_frames)
{
    daemon_up(NULL);
    view_up(1, NULL);
    static char big[40000];
    memset(big, 'x', sizeof big);
    const char *text = "{\"type\":\"report\"}";
    refused(0xC1, true, strlen(text), text, strlen(text), "RSV1 without an extension");
    refused(0x83, true, 2, "{}", 2, "reserved opcode 3");
    refused(0x89, true, 126, big, 126, "a ping over 125 bytes");
    refused(0x09, true, 2, "ab", 2, "a fragmented ping");
    refused(0x80, true, 2, "{}", 2, "a continuation with nothing to continue");
    refused(0x81, true, 2, "\xc3\x28", 2, "invalid UTF-8");
    refused(0x82, true, 4, "\x01\x02\x03\x04", 4, "a binary message");
    refused(0x81, true, 1u << 20, big, sizeof big, "a 1 MiB frame");
    refused(0x81, true, UINT64_MAX >> 1, big, sizeof big, "a 2^63-byte frame");
    {
        /* 16 KiB is the most a page may send, however it is cut up */
        struct vw_ws w;
        vw_ws_open(&w, v.port);
        vw_ws_frame(&w, 0x01, true, 8000, big, 8000);
        vw_ws_frame(&w, 0x00, true, 8000, big, 8000);
        vw_ws_frame(&w, 0x80, true, 8000, big, 8000);
        ck_assert(vw_ws_ended(&w, H_LONG_MS));
        ck_assert_int_eq(w.close_code, 1009);
        vw_ws_close(&w, false);
    }
    /* not closed: counted and ignored. An unmasked frame is one of them:
     * libwebsockets 4.1 reads it as masked with a zero key (docs/view.md) */
    struct vw_ws ok;
    vw_ws_open(&ok, v.port);
    vw_ws_frame(&ok, 0x81, false, 9, "{\"a\":1.5}", 9);
    vw_ws_text(&ok, "{not json");
    vw_ws_text(&ok, "{\"type\":\"crawler\",\"left\":1}");
    vw_ws_text(&ok, "{\"type\":\"report\",\"fps\":60}");
    ck_assert(vw_wait_stat(&v, "messages_in.reports", 1, H_LONG_MS));
    cJSON *s = vw_ws_expect(&ok, "state", H_LONG_MS);
    ck_assert_msg(s != NULL, "a well-behaved client got no state after the bad ones");
    cJSON_Delete(s);
    ck_assert_double_eq(vw_stat(&v, "messages_in.bad_json"), 1);
    ck_assert_double_eq(vw_stat(&v, "messages_in.bad_type"), 2);
    ck_assert_double_eq(vw_stat(&v, "messages_in.binary"), 1);
    ck_assert_double_ge(vw_stat(&v, "messages_in.oversized"), 3);
    ck_assert_double_eq(vw_stat(&v, "last_report.fps"), 60);
    /* every refused connection counted as ended by the server or cut */
    double ended = vw_stat(&v, "ws.closed_by_server") + vw_stat(&v, "ws.closed_abrupt");
    ck_assert_double_eq(ended, 10);
    ck_assert_double_eq(vw_stat(&v, "clients"), 1);
    /* the robot never saw any of it */
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.CRAWLER"), 0);
    vw_ws_close(&ok, true);
    ck_assert_int_eq(h_wait_exit(&v.proc, 0), -1);
}
END_TEST

/* ---- slow clients, many clients -------------------------------------- */

/* A browser that stops reading, with eight robots streaming (400 states a
 * second): once its socket is full the server skips states for it; its
 * memory stays where it was and the reading browser keeps its rate. When
 * it reads again, what was waiting for it is no more than the fixed send
 * buffer (KN_VIEW_SNDBUF) and its own receive buffer hold, and then it
 * gets states as they come. */
START_TEST(slow_client)
{
    daemon_up(NULL);
    view_up(8, NULL);
    struct vw_ws slow, fast;
    ck_assert_int_eq(vw_ws_connect(&slow, v.port, "/ws", NULL, 4096), 101);
    vw_ws_open(&fast, v.port);
    /* 32 KiB at 400 states a second fill in well under a second; a
     * sanitized build streams slower */
    uint64_t t_fill = h_now_us();
    uint64_t end = t_fill + (getenv("KN_SANITIZED") ? 60 : 20) * 1000000ull;
    char *msg;
    size_t len;
    while (vw_stat(&v, "frames_out.states_skipped") < 100 && h_now_us() < end)
        for (int i = 0; i < 50; i++)
            if (vw_ws_recv(&fast, &msg, &len, 100) > 0)
                free(msg);
    ck_assert_msg(vw_stat(&v, "frames_out.states_skipped") >= 100,
                  "the slow client never filled up");
    double fill_s = (double)(h_now_us() - t_fill) / 1e6;
    ck_assert_double_eq(vw_stat(&v, "ws.sndbuf_failed"), 0);
    long rss0 = h_rss_kb(v.proc.pid);
    uint64_t t0 = h_now_us();
    unsigned states = 0;
    while (h_now_us() - t0 < 5000000u) {
        if (vw_ws_recv(&fast, &msg, &len, 100) > 0) {
            for (const char *q = msg; (q = strstr(q, "\"type\":\"state\"")) != NULL; q++)
                states++; /* each state of the batch */
            free(msg);
        }
    }
    double secs = (double)(h_now_us() - t0) / 1e6;
    long rss1 = h_rss_kb(v.proc.pid);
    /* the slow one reads again: its backlog is the states queued for it
     * before the first one younger than 0.5 s */
    size_t backlog = 0, state_len = 0;
    double age_s = 1e9;
    uint64_t t_drain = h_now_us();
    while (age_s > 0.5 && h_now_us() - t_drain < 10000000u) {
        if (vw_ws_recv(&slow, &msg, &len, 100) <= 0)
            continue;
        cJSON *j = cJSON_ParseWithLength(msg, len);
        /* a batch of states: the age of its first */
        cJSON *first = j ? cJSON_GetArrayItem(cJSON_GetObjectItem(j, "states"), 0) : NULL;
        cJSON *srv = first ? cJSON_GetObjectItem(first, "srv_us") : NULL;
        if (cJSON_IsNumber(srv)) {
            age_s = ((double)h_now_us() - srv->valuedouble) / 1e6;
            state_len = len;
            if (age_s > 0.5)
                backlog += len;
        }
        cJSON_Delete(j);
        free(msg);
    }
    printf("slow client: filled in %.1f s; RSS %ld KiB -> %ld KiB over %.1f s; reading client "
           "%.0f states/s (8 robots x 50 Hz); states skipped for the slow one %.0f; its backlog "
           "%zu bytes (batches of states of %zu bytes), then states %.2f s old\n",
           fill_s, rss0, rss1, secs, states / secs, vw_stat(&v, "frames_out.states_skipped"),
           backlog, state_len, age_s);
    ck_assert_msg(age_s <= 0.5, "the slow client, reading again, got no live state in 10 s");
    /* send buffer as Linux counts it, the client's 4096-byte receive
     * buffer (doubled), what lws holds back of a cut write, slack */
    ck_assert_msg(backlog <= 2 * 16384 + 2 * 4096 + 16384 + 8192,
                  "%zu bytes of states were queued for a browser that stopped reading", backlog);
    if (!h_wrapped()) {
        ck_assert_msg(rss1 - rss0 <= vw_rss_allow_kb(), "RSS grew %ld KiB with a slow client",
                      rss1 - rss0);
        ck_assert_msg(states / secs >= 0.7 * 400, "the reading client got %.0f states/s",
                      states / secs);
    }
    vw_ws_close(&slow, false);
    vw_ws_close(&fast, true);
    ck_assert(vw_wait_stat(&v, "ws.closed_abrupt", 1, H_LONG_MS));
}
END_TEST

static void one_cycle(int i)
{
    struct vw_ws w;
    vw_ws_open(&w, v.port);
    cJSON *h = vw_ws_expect(&w, "hello", H_LONG_MS);
    ck_assert_ptr_nonnull(h);
    cJSON_Delete(h);
    if (i % 3 == 2) {
        /* a half-sent message left behind */
        vw_ws_frame(&w, 0x01, true, 100, "{\"type\":", 8);
    }
    vw_ws_close(&w, i % 2 == 0);
}

START_TEST(connect_cycles)
{
    daemon_up(NULL);
    view_up(1, NULL);
    for (int i = 0; i < 10; i++)
        one_cycle(i);
    ck_assert(vw_wait_stat(&v, "ws.accepted", 10, H_LONG_MS));
    long rss0 = h_rss_kb(v.proc.pid);
    for (int i = 0; i < 100; i++)
        one_cycle(i);
    uint64_t end = h_now_us() + H_LONG_MS * 1000ull;
    while (vw_stat(&v, "clients") > 0 && h_now_us() < end)
        h_sleep_ms(20);
    long rss1 = h_rss_kb(v.proc.pid);
    printf("100 connect/disconnect cycles: RSS %ld KiB -> %ld KiB\n", rss0, rss1);
    ck_assert_double_eq(vw_stat(&v, "clients"), 0);
    ck_assert_double_eq(vw_stat(&v, "ws.accepted"), 110);
    ck_assert_double_eq(vw_stat(&v, "ws.closed_by_peer") + vw_stat(&v, "ws.closed_abrupt"), 110);
    if (!h_wrapped())
        ck_assert_msg(rss1 - rss0 <= vw_rss_allow_kb(), "RSS grew %ld KiB over 100 cycles",
                      rss1 - rss0);
}
END_TEST

/* --max-clients, the /ws path and the Origin rule. */
START_TEST(client_limits)
{
    daemon_up(NULL);
    const char *const args[] = { "--max-clients", "2", NULL };
    view_up(1, args);
    struct vw_ws a, b, c;
    vw_ws_open(&a, v.port);
    char origin[128];
    snprintf(origin, sizeof origin, "Origin: http://127.0.0.1:%d\r\n", v.port);
    ck_assert_int_eq(vw_ws_connect(&b, v.port, "/ws", origin, 0), 101);
    ck_assert_int_ne(vw_ws_connect(&c, v.port, "/ws", NULL, 0), 101);
    ck_assert_double_eq(vw_stat(&v, "ws.refused_full"), 1);
    vw_ws_close(&b, true);
    ck_assert(vw_wait_stat(&v, "ws.closed_by_peer", 1, H_LONG_MS));
    ck_assert_int_ne(vw_ws_connect(&c, v.port, "/other", NULL, 0), 101);
    ck_assert_double_eq(vw_stat(&v, "ws.refused_path"), 1);
    ck_assert_int_ne(vw_ws_connect(&c, v.port, "/ws", "Origin: http://evil.example\r\n", 0), 101);
    ck_assert_double_eq(vw_stat(&v, "ws.refused_origin"), 1);
    ck_assert_int_eq(vw_ws_connect(&c, v.port, "/ws", NULL, 0), 101);
    vw_ws_close(&c, true);
    vw_ws_close(&a, true);
}
END_TEST

/* ---- robots ---------------------------------------------------------- */

/* A KRP/1 robot without the world extension (tests/lib's krp_robot, which
 * ignores WORLD_REQ): states flow, the world is null, named on the
 * command line. */
START_TEST(robot_without_world)
{
    struct h_standin robot;
    h_sim_start(&robot, "KN_TEST_ROBOT", true, 0, "robot", NULL);
    char spec[64];
    snprintf(spec, sizeof spec, "left=127.0.0.1:%d", robot.port);
    const char *const args[] = { "--robot", spec, NULL };
    vw_view_start(&v, args);
    struct vw_ws a;
    vw_ws_open(&a, v.port);
    cJSON *h = vw_ws_expect(&a, "hello", H_LONG_MS);
    ck_assert_str_eq(get(cJSON_GetArrayItem(get(h, "robots"), 0), "name")->valuestring, "left");
    cJSON_Delete(h);
    cJSON *w = vw_ws_expect(&a, "world", 3 * H_LONG_MS);
    ck_assert_ptr_nonnull(w);
    ck_assert(cJSON_IsNull(get(w, "world")));
    cJSON_Delete(w);
    cJSON *s = vw_ws_expect(&a, "state", H_LONG_MS);
    ck_assert_ptr_nonnull(s);
    cJSON_Delete(s);
    vw_ws_close(&a, true);
}
END_TEST

/* The daemon's side: HELLO_ACK says it can describe the world, and the
 * document comes back whole in chunks; past its end is RANGE. */
START_TEST(daemon_world_req)
{
    daemon_up(NULL);
    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    h_hello(&u, "probe");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS));
    ck_assert_uint_eq(m.h.type, KN_KRP_HELLO_ACK);
    ck_assert_uint_eq(m.u.hello_ack.capabilities & KN_KRP_CAP_WORLD, KN_KRP_CAP_WORLD);
    static char doc[1 << 20];
    uint32_t off = 0, total = 1;
    int asked = 0;
    while (off < total) {
        struct kn_krp_msg q;
        kn_krp_init(&q, KN_KRP_WORLD_REQ, ++u.seq, 0);
        q.u.world_req.offset = off;
        h_udp_send(&u, &q);
        asked++;
        ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS));
        ck_assert_uint_eq(m.h.type, KN_KRP_WORLD);
        ck_assert_uint_eq(m.u.world.offset, off);
        total = m.u.world.total_len;
        ck_assert_uint_lt(total, sizeof doc);
        memcpy(doc + off, m.u.world.data, m.u.world.n);
        off += m.u.world.n;
        ck_assert_uint_gt(m.u.world.n, 0);
    }
    cJSON *o = cJSON_ParseWithLength(doc, total);
    ck_assert_msg(cJSON_IsObject(o), "not JSON: %.100s", doc);
    ck_assert_str_eq(get(o, "backend")->valuestring, "standin");
    ck_assert(cJSON_IsNull(get(o, "terrain")));
    cJSON_Delete(o);
    struct kn_krp_msg q;
    kn_krp_init(&q, KN_KRP_WORLD_REQ, ++u.seq, 0);
    q.u.world_req.offset = total;
    h_udp_send(&u, &q);
    h_expect_error(&u, KN_KRP_ERR_RANGE, u.seq, KN_KRP_WORLD_REQ);
    ck_assert_double_eq(h_stat(&d, "robots.0.datagrams_in.WORLD_REQ"), asked + 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.rules.world_bad_offset"), 1);
    ck_assert_double_eq(h_stat(&d, "robots.0.rules.commands"), 0);
    h_udp_close(&u);
}
END_TEST

/* Start-up refusals: exit 2 for a bad command line, 1 with the reason for
 * an address it cannot listen on (taken, or not this machine's). */
static int run_view(const char *const args[], const char *err_name)
{
    char *argv[16];
    int n = 0;
    argv[n++] = getenv("KN_VIEW");
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    struct h_proc p;
    h_spawn(&p, argv, NULL, err_name);
    int st = h_wait_exit(&p, H_LONG_MS);
    ck_assert_msg(st != -1 && WIFEXITED(st), "kenaf-view did not exit: %s", h_stderr(&p));
    return WEXITSTATUS(st);
}

START_TEST(start_errors)
{
    const char *const bad_port[] = { "--listen", "127.0.0.1:99999", NULL };
    ck_assert_int_eq(run_view(bad_port, "a.stderr"), 2);
    ck_assert_ptr_nonnull(strstr(h_file_text(h_path("a.stderr")), "port out of range"));
    const char *const bad_robot[] = { "--robot", "x=[::1", NULL };
    ck_assert_int_eq(run_view(bad_robot, "b.stderr"), 2);
    ck_assert_ptr_nonnull(strstr(h_file_text(h_path("b.stderr")), "missing ']'"));
    const char *const bad_max[] = { "--max-clients", "0", NULL };
    ck_assert_int_eq(run_view(bad_max, "c.stderr"), 2);
    const char *const not_here[] = { "--listen", "192.0.2.1:8088", NULL };
    ck_assert_int_eq(run_view(not_here, "d.stderr"), 1);
    ck_assert_ptr_nonnull(strstr(h_file_text(h_path("d.stderr")), "cannot listen on 192.0.2.1"));
    int port = 0;
    int lfd = h_tcp_listen(&port);
    char taken[32];
    snprintf(taken, sizeof taken, "127.0.0.1:%d", port);
    const char *const in_use[] = { "--listen", taken, NULL };
    ck_assert_int_eq(run_view(in_use, "e.stderr"), 1);
    ck_assert_ptr_nonnull(strstr(h_file_text(h_path("e.stderr")), "in use"));
    close(lfd);
    const char *const help[] = { "--help", NULL };
    ck_assert_int_eq(run_view(help, "f.stderr"), 0);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "pages", pages, 60, NULL, NULL },
        { "observer", observer_only, 60, NULL, NULL },
        { "malformed", malformed_frames, 60, NULL, NULL },
        { "slow", slow_client, 240, NULL, NULL },
        { "cycles", connect_cycles, 90, NULL, NULL },
        { "limits", client_limits, 60, NULL, NULL },
        { "no-world", robot_without_world, 60, NULL, NULL },
        { "daemon-world", daemon_world_req, 60, NULL, NULL },
        { "start-errors", start_errors, 60, NULL, NULL },
    };
    return h_run_cases("view-integration", cases, sizeof cases / sizeof cases[0]);
}
