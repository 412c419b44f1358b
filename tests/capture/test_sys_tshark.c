/* System test: kenaf-simd captures a controller session (every KRP/1
 * message type, every ERROR code a controller can provoke, broken
 * envelopes) and its simulator connection with --capture; tshark with the
 * KRP/1 dissector (tools/wireshark/krp.lua) opens the file and decodes
 * every field, flags every bad envelope, and follows the TCP stream
 * without complaint. Exits 77 (skipped) when tshark is not installed.
 * Process records are static: the harness keeps pointers to them until
 * teardown. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap_harness.h"
#include "harness_suite.h"

static const char *tshark;

/* One row of `tshark -T fields` output per KRP/1 datagram. */
enum {
    C_TYPE,
    C_SEQ,
    C_FLAGS,
    C_HELLO,
    C_LEFT,
    C_RIGHT,
    C_MASK,
    C_FL,
    C_RL,
    C_PERIOD,
    C_ESTOP,
    C_ACKSEQ,
    C_ACKTYPE,
    C_HA_NAME,
    C_HA_BACKEND,
    C_HA_CPM,
    C_HA_VMAX,
    C_HA_FMIN,
    C_ST_REQ,
    C_ST_FLAGS,
    C_ST_ACCZ,
    C_ST_BATT,
    C_ST_FLA,
    C_ER_SEQ,
    C_ER_TYPE,
    C_ER_CODE,
    C_EXPERT,
    C_WR_OFF,
    C_W_TOTAL,
    C_W_OFF,
    C_W_LEN,
    C_EI_ENGAGED,
    C_EI_N,
    C_EI_KIND,
    C_EI_PRESENT,
    C_EI_NAME,
    NCOL
};
static const char *const columns[NCOL] = {
    "krp.type",
    "krp.seq",
    "krp.flags",
    "krp.hello.name",
    "krp.crawler.left",
    "krp.crawler.right",
    "krp.flipper.mask",
    "krp.flipper.target_fl",
    "krp.flipper.target_rl",
    "krp.subscribe.period",
    "krp.estop.engage",
    "krp.ack.seq",
    "krp.ack.type",
    "krp.hello_ack.robot_name",
    "krp.hello_ack.backend",
    "krp.hello_ack.counts_per_m",
    "krp.hello_ack.max_speed",
    "krp.hello_ack.flipper_min",
    "krp.status.req_seq",
    "krp.status.flags",
    "krp.status.accel_z",
    "krp.status.battery",
    "krp.status.flipper_fl",
    "krp.error.seq",
    "krp.error.type",
    "krp.error.code",
    "_ws.expert.message",
    "krp.world_req.offset",
    "krp.world.total_len",
    "krp.world.offset",
    "krp.world.chunk_len",
    "krp.estop_info.engaged",
    "krp.estop_info.n",
    "krp.estop_info.kind",
    "krp.estop_info.present",
    "krp.estop_info.name",
};

struct row {
    char col[NCOL][160];
};

static int split_rows(char *text, struct row *rows, int max)
{
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        memset(&rows[n], 0, sizeof rows[n]);
        int c = 0;
        char *p = line;
        while (c < NCOL) {
            char *tab = strchr(p, '\t');
            size_t len = tab ? (size_t)(tab - p) : strlen(p);
            snprintf(rows[n].col[c], sizeof rows[n].col[c], "%.*s", (int)len, p);
            c++;
            if (!tab)
                break;
            p = tab + 1;
        }
        n++;
    }
    return n;
}

static long num(const char *s)
{
    return s[0] ? strtol(s, NULL, 0) : -999999;
}

/* The first row of type `type` whose column `col` equals `value`, or NULL. */
static const struct row *find(const struct row *rows, int n, int type, int col, const char *value)
{
    for (int i = 0; i < n; i++)
        if (num(rows[i].col[C_TYPE]) == type && (col < 0 || strcmp(rows[i].col[col], value) == 0))
            return &rows[i];
    return NULL;
}

static void send_raw(struct h_udp *u, const char *bytes, size_t len)
{
    h_udp_raw(u, bytes, len);
}

START_TEST(tshark_decodes_every_field)
{
    static struct h_standin sim;
    static struct h_daemon d;
    h_standin_start(&sim, 0, "standin", NULL);
    char robots[1200];
    snprintf(robots, sizeof robots, "[%s]", h_standin_robot("kenaf", sim.port, NULL));
    char cap[256];
    snprintf(cap, sizeof cap, "%s", h_path("session.pcapng"));
    const char *args[] = { "--capture", cap, NULL };
    c_daemon_start(&d, "d", robots, args);
    h_wait_backend_fresh(&d, 0, H_LONG_MS);
    ck_assert(h_wait_stat_eq(&d, "capture.active", 1, H_LONG_MS));

    struct h_udp u;
    h_udp_open(&u, d.port[0]);
    uint32_t s;
    s = h_hello(&u, "tshark-ctl");
    struct kn_krp_msg m;
    ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS) && m.h.type == KN_KRP_HELLO_ACK);
    h_expect_ack(&u, h_subscribe(&u, KN_KRP_F_ACK_REQ, 50), KN_KRP_SUBSCRIBE);
    bool push = false;
    for (int i = 0; i < 50 && !push; i++)
        push =
            h_udp_recv(&u, &m, H_LONG_MS) && m.h.type == KN_KRP_STATUS && m.u.status.req_seq == 0;
    ck_assert_msg(push, "no subscription push");
    h_expect_ack(&u, h_crawler(&u, 0, KN_KRP_F_ACK_REQ, 300, -250), KN_KRP_CRAWLER);
    s = h_crawler(&u, 0, 0, 5000, 0);
    h_expect_error(&u, KN_KRP_ERR_RANGE, s, KN_KRP_CRAWLER);
    const int32_t fl[4] = { 1234, 0, -2345, 0 };
    h_expect_ack(&u, h_flipper(&u, 0, KN_KRP_F_ACK_REQ, 0x5, fl), KN_KRP_FLIPPER);
    struct kn_krp_status st = h_status(&u);
    ck_assert(st.flags & KN_KRP_ST_SIMULATED);
    h_expect_ack(&u, h_simple(&u, 0, KN_KRP_STOP, KN_KRP_F_ACK_REQ), KN_KRP_STOP);
    h_expect_ack(&u, h_estop(&u, KN_KRP_F_ACK_REQ, 1), KN_KRP_ESTOP);
    s = h_crawler(&u, 0, 0, 100, 100);
    h_expect_error(&u, KN_KRP_ERR_ESTOP, s, KN_KRP_CRAWLER);
    /* the e-stop info extension: who holds it (this client) */
    h_simple(&u, 0, KN_KRP_ESTOP_INFO_REQ, 0);
    ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS) && m.h.type == KN_KRP_ESTOP_INFO);
    ck_assert_uint_eq(m.u.estop_info.engaged, 1);
    h_expect_ack(&u, h_estop(&u, KN_KRP_F_ACK_REQ, 0), KN_KRP_ESTOP);
    h_expect_ack(&u, h_subscribe(&u, KN_KRP_F_ACK_REQ, 0), KN_KRP_SUBSCRIBE);
    /* the world description extension: the first chunk */
    send_raw(&u, "KN\x01\x08\x6a\0\0\0\x04\0\0\0\0\0\0\0", 16);
    ck_assert(h_udp_recv_answer(&u, &m, H_LONG_MS) && m.h.type == KN_KRP_WORLD);
    struct kn_krp_world world = m.u.world;
    ck_assert_uint_gt(world.total_len, 0);
    /* broken envelopes, each answered by the robot */
    send_raw(&u, "KN\x02\x02\x64\0\0\0\x08\0\0\0\1\0\0\0\1\0\0\0", 20); /* version 2 */
    h_expect_error(&u, KN_KRP_ERR_BAD_VERSION, 100, KN_KRP_CRAWLER);
    send_raw(&u, "KN\x01\x42\x65\0\0\0\0\0\0\0", 12); /* type 0x42 */
    h_expect_error(&u, KN_KRP_ERR_UNKNOWN_TYPE, 101, 0x42);
    send_raw(&u, "KN\x01\x02\x66\0\0\0\x04\0\0\0\1\0\0\0", 16); /* CRAWLER, 4 bytes */
    h_expect_error(&u, KN_KRP_ERR_BAD_LENGTH, 102, KN_KRP_CRAWLER);
    send_raw(&u, "KN\x01\x02\x67\0\0\0\x09\0\0\0\1\0\0\0\1\0\0\0", 20); /* length field 9 */
    h_expect_error(&u, KN_KRP_ERR_BAD_LENGTH, 103, KN_KRP_CRAWLER);
    send_raw(&u, "KN\x01", 3); /* header cut */
    h_expect_error(&u, KN_KRP_ERR_BAD_LENGTH, 0, 0);
    send_raw(&u, "KN\x01\x80\x68\0\0\0\x08\0\0\0\1\0\0\0\2\0\0\0", 20); /* an ACK to the robot */
    h_expect_error(&u, KN_KRP_ERR_UNKNOWN_TYPE, 104, KN_KRP_ACK);
    send_raw(&u, "XXXXXXXXXXXXXXXX", 16); /* bad magic */
    send_raw(&u, "KN\x01\x04\x69\0\0\0\0\0\x13\0",
             12); /* STOP, ACK_REQ, SESSION (meaningless here) and a reserved bit */
    h_expect_ack(&u, 105, KN_KRP_STOP);
    h_expect_silence(&u);
    h_udp_close(&u);

    const char *ans = c_command(&d, "capture stop");
    ck_assert_ptr_nonnull(strstr(ans, "\"ok\":true"));
    ck_assert(c_capture_closed(&d, H_LONG_MS));

    /* ---- tshark -T fields ---- */
    const char *lua = getenv("KN_KRP_LUA");
    ck_assert_msg(lua != NULL, "KN_KRP_LUA not set");
    char xopt[600], port[64];
    snprintf(xopt, sizeof xopt, "lua_script:%s", lua);
    snprintf(port, sizeof port, "krp.udp_port:%d", d.port[0]);
    char *argv[8 + 2 * NCOL + 8];
    int a = 0;
    argv[a++] = (char *)tshark;
    argv[a++] = "-n";
    argv[a++] = "-X";
    argv[a++] = xopt;
    argv[a++] = "-o";
    argv[a++] = port;
    argv[a++] = "-r";
    argv[a++] = cap;
    argv[a++] = "-Y";
    argv[a++] = "krp";
    argv[a++] = "-T";
    argv[a++] = "fields";
    argv[a++] = "-E";
    argv[a++] = "separator=/t";
    for (int c = 0; c < NCOL; c++) {
        argv[a++] = "-e";
        argv[a++] = (char *)columns[c];
    }
    argv[a] = NULL;
    static char out[1 << 20];
    int rc = c_run(argv, out, sizeof out, 60000);
    ck_assert_msg(rc == 0, "tshark failed (%d): %s", rc, out);
    static struct row rows[400];
    int n = split_rows(out, rows, 400);
    ck_assert_int_ge(n, 30);

    const struct row *r;
    r = find(rows, n, 0x01, C_HELLO, "tshark-ctl");
    ck_assert_msg(r != NULL, "no HELLO with its name:\n%s", out);
    r = find(rows, n, 0x81, C_HA_NAME, "kenaf");
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(num(r->col[C_HA_BACKEND]), 1);
    ck_assert_int_eq(num(r->col[C_HA_CPM]), 4000);
    ck_assert_int_eq(num(r->col[C_HA_VMAX]), 800);
    ck_assert_int_eq(num(r->col[C_HA_FMIN]), -11950);
    r = find(rows, n, 0x02, C_LEFT, "300");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->col[C_RIGHT], "-250");
    ck_assert_int_eq(num(r->col[C_FLAGS]) & 1, 1);
    ck_assert_ptr_nonnull(find(rows, n, 0x02, C_LEFT, "5000"));
    r = find(rows, n, 0x03, C_FL, "1234");
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(r->col[C_RL], "-2345");
    ck_assert_int_eq(num(r->col[C_MASK]), 5);
    ck_assert_ptr_nonnull(find(rows, n, 0x06, C_PERIOD, "50"));
    ck_assert_ptr_nonnull(find(rows, n, 0x06, C_PERIOD, "0"));
    ck_assert_ptr_nonnull(find(rows, n, 0x07, C_ESTOP, "1"));
    ck_assert_ptr_nonnull(find(rows, n, 0x07, C_ESTOP, "0"));
    ck_assert_ptr_nonnull(find(rows, n, 0x04, -1, NULL));
    ck_assert_ptr_nonnull(find(rows, n, 0x05, -1, NULL));
    ck_assert_ptr_nonnull(find(rows, n, 0x80, C_ACKTYPE, "0x07"));
    ck_assert_ptr_nonnull(find(rows, n, 0x0B, -1, NULL));
    r = find(rows, n, 0x87, C_EI_NAME, "tshark-ctl");
    ck_assert_msg(r != NULL, "no ESTOP_INFO naming the engager:\n%s", out);
    ck_assert_str_eq(r->col[C_EI_ENGAGED], "1");
    ck_assert_str_eq(r->col[C_EI_N], "1");
    ck_assert_str_eq(r->col[C_EI_KIND], "1");
    ck_assert_str_eq(r->col[C_EI_PRESENT], "1");
    ck_assert_msg(r->col[C_EXPERT][0] == 0, "expert info on a good ESTOP_INFO: %s",
                  r->col[C_EXPERT]);
    r = find(rows, n, 0x08, C_WR_OFF, "0");
    ck_assert_msg(r != NULL, "no WORLD_REQ with its offset");
    char wtotal[32], wlen[32];
    snprintf(wtotal, sizeof wtotal, "%u", (unsigned)world.total_len);
    snprintf(wlen, sizeof wlen, "%u", (unsigned)world.n);
    r = find(rows, n, 0x86, C_W_TOTAL, wtotal);
    ck_assert_msg(r != NULL, "no WORLD with total_len %s", wtotal);
    ck_assert_str_eq(r->col[C_W_OFF], "0");
    ck_assert_str_eq(r->col[C_W_LEN], wlen);
    ck_assert_msg(r->col[C_EXPERT][0] == 0, "expert info on a good WORLD: %s", r->col[C_EXPERT]);
    r = find(rows, n, 0x85, C_ST_REQ, "0"); /* a push */
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(num(r->col[C_ST_ACCZ]), 9807); /* standin at rest: +g */
    ck_assert_int_eq(num(r->col[C_ST_BATT]), 24000);
    ck_assert_int_ne(num(r->col[C_ST_FLAGS]) & 0x4, 0); /* SIMULATED */
    char req[32];
    snprintf(req, sizeof req, "%u", st.req_seq);
    r = find(rows, n, 0x85, C_ST_REQ, req);
    ck_assert_msg(r != NULL, "no STATUS answering seq %s", req);
    ck_assert_int_eq(num(r->col[C_ST_FLA]), st.flipper_cdeg[0]);
    static const struct {
        int code, type;
        const char *seq;
    } errors[] = {
        { 5, 0x02, NULL },  { 6, 0x02, NULL },  { 2, 0x02, "100" }, { 4, 0x42, "101" },
        { 3, 0x02, "102" }, { 3, 0x02, "103" }, { 3, 0x00, "0" },   { 4, 0x80, "104" },
    };
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++) {
        bool seen = false;
        for (int k = 0; k < n && !seen; k++)
            seen = num(rows[k].col[C_TYPE]) == 0xFF &&
                   num(rows[k].col[C_ER_CODE]) == errors[i].code &&
                   num(rows[k].col[C_ER_TYPE]) == errors[i].type &&
                   (!errors[i].seq || !strcmp(rows[k].col[C_ER_SEQ], errors[i].seq));
        ck_assert_msg(seen, "no ERROR code %d for type 0x%02x", errors[i].code, errors[i].type);
    }
    /* expert info on every broken envelope */
    static const char *const experts[] = {
        "Version is not 1",
        "Unknown message type 0x42",
        "CRAWLER carries 8 payload bytes, not 4",
        "Length field says 9 payload bytes, the datagram has 8",
        "Header incomplete: 3 bytes",
        "Bad magic",
        "Robot-to-controller type sent to the robot",
        "Reserved flag bits set",
        "ERROR RANGE",
        "ERROR ESTOP",
    };
    for (size_t i = 0; i < sizeof experts / sizeof experts[0]; i++) {
        bool seen = false;
        for (int k = 0; k < n && !seen; k++)
            seen = strstr(rows[k].col[C_EXPERT], experts[i]) != NULL;
        ck_assert_msg(seen, "no expert info \"%s\"", experts[i]);
    }

    /* ---- tshark -V: every field of STATUS and HELLO_ACK with its unit ---- */
    char *argv2[] = { (char *)tshark, "-n",
                      "-X",           xopt,
                      "-o",           port,
                      "-r",           cap,
                      "-Y",           "krp.type == 0x85 || krp.type == 0x81 || krp.type == 0x87",
                      "-V",           "-O",
                      "krp",          NULL };
    rc = c_run(argv2, out, sizeof out, 60000);
    ck_assert_int_eq(rc, 0);
    static const char *const labels[] = {
        "Robot clock: ",
        " us (",
        "Left belt encoder: ",
        "Right belt encoder: ",
        "Left belt speed: ",
        "Right belt speed: ",
        "FL flipper angle: ",
        "FR flipper angle: ",
        "RL flipper angle: ",
        "RR flipper angle: ",
        "FL flipper torque: ",
        "RR flipper torque: ",
        " mN m",
        "Roll (+ lifts the left side): ",
        "Pitch (+ lowers the nose): ",
        "Yaw (+ turns left): ",
        "Angular rate x (body): ",
        "Angular rate z (body): ",
        " mdeg/s",
        "Acceleration z (body, gravity included): 9807 mm/s^2",
        "Position x (world, ground truth): ",
        "Position z (world, ground truth): ",
        "Battery: 24000 mV",
        "State flags: ",
        "ESTOP (emergency stop engaged)",
        "BACKEND_UP (simulator or hardware link up): True",
        "SIMULATED: True",
        "WATCHDOG",
        "CLAMPED",
        "STALE",
        "Protocol version: 1",
        "Simulated: simulation (1)",
        "Backend: built-in engine (1)",
        "Robot name: kenaf",
        "Ground-truth pose: True",
        "Lockstep",
        "World description (WORLD_REQ answered): True",
        "Flipper torque",
        "Encoder counts per metre: 4000 counts/m",
        "Belt speed limit: 800 mm/s",
        "Flipper angle minimum: -11950 x 0.01 deg (-119.50 deg)",
        "E-stop info (ESTOP_INFO_REQ answered): True",
        "Engagements holding: 1",
        "Engagement 1: plain \"tshark-ctl\", held ",
        "Engaged by: plain (1)",
        "Engager present: present (1)",
        "Engager name: tshark-ctl",
        "Flipper angle maximum: 11950 x 0.01 deg (119.50 deg)",
    };
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        ck_assert_msg(strstr(out, labels[i]) != NULL, "tshark -V shows no \"%s\"", labels[i]);

    /* ---- the simulator leg: a clean TCP stream Wireshark follows ---- */
    char *argv3[] = {
        (char *)tshark, "-n", "-r", cap, "-Y", "tcp.analysis.flags || _ws.malformed", NULL
    };
    rc = c_run(argv3, out, sizeof out, 60000);
    ck_assert_int_eq(rc, 0);
    ck_assert_msg(out[0] == '\0', "tshark finds problems in the TCP stream:\n%.2000s", out);
    char *argv4[] = { (char *)tshark, "-n", "-r", cap, "-q", "-z", "follow,tcp,ascii,0", NULL };
    rc = c_run(argv4, out, sizeof out, 60000);
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"hello\",\"protocol\":1,\"robot\":\"kenaf\"}"));
    ck_assert_ptr_nonnull(strstr(out, "{\"type\":\"ready\""));
    ck_assert_ptr_nonnull(strstr(out, "\"belts\":[0.3,-0.25]"));
    ck_assert_ptr_nonnull(strstr(out, "\"type\":\"state\""));
}
END_TEST

int main(void)
{
    tshark = h_which("tshark");
    if (!tshark) {
        printf("SKIP: tshark is not installed (tools/install-deps installs it)\n");
        return 77;
    }
    static char path[4096];
    snprintf(path, sizeof path, "%s", tshark);
    tshark = path;
    Suite *s = suite_create("capture decoded by tshark");
    TCase *tc = tcase_create("tshark");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, 150);
    tcase_add_test(tc, tshark_decodes_every_field);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
