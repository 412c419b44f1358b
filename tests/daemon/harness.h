/* Helpers for kenaf-simd's system tests, on top of tests/common (scratch
 * directory, child processes that die with the test, stand-in simulators,
 * loopback sockets): kenaf-simd with a NOTIFY_SOCKET to see
 * READY/STOPPING, the stats socket, KRP/1 over real UDP sockets (built and
 * checked with the codec), and the stand-in's command log. Every wait has
 * a deadline and polls a condition. */
#ifndef KN_TEST_HARNESS_H
#define KN_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "harness_net.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "krp.h"
#include "krp_session.h"

/* Runs examples/square unchanged through tools/kenaf-sim-run ($KN_SIM_RUN,
 * $KN_SQUARE) against the robot on 127.0.0.1:port and fails the test
 * unless it exits 0 within timeout_ms having shown a SIMULATED status
 * block; extra (may be NULL) goes into the failure message. Returns its
 * stdout (a static buffer). */
const char *h_run_square(int port, int timeout_ms, const char *extra);

/* Runs argv to its end (at most timeout_ms): its stdout into out and its
 * stderr into err (each cut to its length; err may be NULL; the stderr of
 * the latest run is also in the scratch file run.stderr). Returns the
 * exit code, 128+signal, or -1 on timeout (then it is killed). */
int h_run(char *const argv[], char *out, size_t outlen, char *err, size_t errlen, int timeout_ms);

/* ---- the stand-in simulator ---- */
/* $KN_STANDIN (standin_sim, or another stand-in a test names there) under
 * KN_WRAP; h_sim_start says the rest. */
void h_standin_start(struct h_standin *s, int port, const char *name, const char *const extra[]);
/* One entry of the "robots" array: robot `name` on the stand-in at
 * 127.0.0.1:sim_port (reconnecting after 0.3 s at most); extra (may be
 * NULL) goes in after "listen". A static buffer, rotating 4 deep. */
const char *h_standin_robot(const char *name, int sim_port, const char *extra);

/* ---- kenaf-simd ---- */
#define H_MAX_ROBOTS 256 /* ports read from the stats */
struct h_daemon {
    struct h_proc proc;
    char config[256];
    char stats[256];
    char notify_path[256];
    int notify_fd;
    char notes[8192]; /* every notify message received, '\n'-joined */
    char top[1024];   /* top-level config members written before "robots" */
    int nrobots;
    int port[H_MAX_ROBOTS]; /* KRP/1 UDP ports, from the stats */
};
/* robots_json: the "robots" array text. Writes the config (stats socket
 * and log level added), starts kenaf-simd with NOTIFY_SOCKET, waits for
 * READY=1 and reads the robots' UDP ports from the stats. */
void h_daemon_start(struct h_daemon *d, const char *robots_json);
/* The same with extra environment entries ("K=V", NULL-terminated). */
void h_daemon_start_env(struct h_daemon *d, const char *robots_json, char *const env[]);
/* The general form: the daemon's files are NAME.json, NAME-stats.sock,
 * NAME-notify.sock and NAME.stderr, so several daemons in one test keep
 * apart (h_daemon_start's NAME is "kenaf-simd"); args go after "--config
 * FILE" (NULL-terminated, may be NULL); wrapped: under KN_WRAP. */
void h_daemon_launch(struct h_daemon *d, const char *name, const char *robots_json,
                     const char *const args[], char *const env[], bool wrapped);
/* h_daemon_launch without waiting: top (NULL: the harness's, below) is
 * the text of more top-level config members ("\"k\": v, ..."). The
 * harness's: "ready_timeout_s": 0 (READY as soon as the robots are bound;
 * tests that need a simulator wait for it with h_wait_backend_fresh) and
 * "capture_dir": the scratch directory. */
void h_daemon_spawn(struct h_daemon *d, const char *name, const char *top, const char *robots_json,
                    const char *const args[], char *const env[], bool wrapped);
/* The same with the stats socket at `stats` (NULL: NAME-stats.sock in the
 * scratch directory). */
void h_daemon_spawn_at(struct h_daemon *d, const char *name, const char *stats, const char *top,
                       const char *robots_json, const char *const args[], char *const env[],
                       bool wrapped);
/* Waits for READY=1 (failing the test after H_LONG_MS) and reads the
 * robots' UDP ports from the stats. */
void h_daemon_ready(struct h_daemon *d);
/* Just writes the config file the daemon reads (for reload tests). */
void h_daemon_write_config(struct h_daemon *d, const char *robots_json);
/* Waits until a notify message containing `what` arrived (counting from
 * the start); true when seen. */
bool h_notify_seen(struct h_daemon *d, const char *what, int timeout_ms);
/* Number of notify messages containing `what` seen so far (after draining). */
int h_notify_count(struct h_daemon *d, const char *what);

cJSON *h_stats(struct h_daemon *d); /* caller deletes */
/* A number from the stats by a dotted path ("robots.0.drops.bad_magic");
 * booleans read 0/1; fails the test if the path is missing. */
double h_stat(struct h_daemon *d, const char *path);
const char *h_stat_str(struct h_daemon *d, const char *path); /* static copy */
/* Polls until h_stat(path) >= min; true when reached. */
bool h_wait_stat(struct h_daemon *d, const char *path, double min, int timeout_ms);

/* Polls until h_stat(path) == want. */
bool h_wait_stat_eq(struct h_daemon *d, const char *path, double want, int timeout_ms);
/* Waits until robot `robot`'s backend is up (BACKEND_UP) and its state
 * fresh (STALE 0); fails the test, with the daemon's stderr, otherwise. */
void h_wait_backend_fresh(struct h_daemon *d, int robot, int timeout_ms);

/* ---- KRP/1 over UDP ---- */
struct h_udp {
    int fd;
    uint32_t seq;
    struct kn_krp_session sess; /* after h_hello_session: stamped on what h_udp_send sends */
};
void h_udp_open(struct h_udp *u, int port);
void h_udp_close(struct h_udp *u);
void h_udp_raw(struct h_udp *u, const void *buf, size_t len);
/* Encodes and sends m; m->h.seq is used as is. */
void h_udp_send(struct h_udp *u, const struct kn_krp_msg *m);
/* Next datagram, decoded (must decode OK); false on timeout. */
bool h_udp_recv(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms);
/* Like h_udp_recv but skips subscription pushes (STATUS with req_seq 0). */
bool h_udp_recv_answer(struct h_udp *u, struct kn_krp_msg *m, int timeout_ms);

/* Short forms: build and send one message with seq = ++u->seq unless
 * seq != 0 is given. Return the seq used. */
uint32_t h_hello(struct h_udp *u, const char *name);
/* A session HELLO (to drive, or to observe), its HELLO_ACK awaited and
 * taken; returns the role the robot gave (KN_KRP_ROLE_*). */
uint8_t h_hello_session(struct h_udp *u, const char *name, bool observe);
uint32_t h_crawler(struct h_udp *u, uint32_t seq, uint16_t flags, int32_t l, int32_t r);
uint32_t h_flipper(struct h_udp *u, uint32_t seq, uint16_t flags, uint8_t mask,
                   const int32_t cdeg[4]);
uint32_t h_simple(struct h_udp *u, uint32_t seq, uint8_t type, uint16_t flags);
uint32_t h_subscribe(struct h_udp *u, uint16_t flags, uint16_t period);
uint32_t h_estop(struct h_udp *u, uint16_t flags, uint8_t engage);

/* The next answer must be ERROR code for (seq, type) / ACK for (seq, type). */
void h_expect_error(struct h_udp *u, uint8_t code, uint32_t seq, uint8_t type);
void h_expect_ack(struct h_udp *u, uint32_t seq, uint8_t type);
/* STATUS_REQ round trip; fails the test without an answer. */
struct kn_krp_status h_status(struct h_udp *u);
/* The same, skipping whatever else arrives first (ERRORs for commands sent
 * in a loop, pushes). */
struct kn_krp_status h_status_any(struct h_udp *u);
/* Proves nothing else was answered: a STATUS_REQ must be the very next
 * answer (loopback keeps order). */
void h_expect_silence(struct h_udp *u);
/* Sends CRAWLER (l, r) asking for an ACK every 200 ms until one is
 * answered ERROR code (a backend still looking at its world accepts them
 * first); fails the test if none is within timeout_ms. The answer after
 * that ERROR (an ACK for a kept set-point) is left to the caller. Returns
 * how many were accepted before. */
int h_crawler_until_error(struct h_udp *u, uint8_t code, int32_t l, int32_t r, int timeout_ms);

/* ---- the stand-in's log ---- */
struct h_cmd {
    uint64_t t_us;
    int client;
    double belts[2];
    double flippers[4];
    uint8_t fmask;
    bool reapply;
};
/* All "cmd" lines received so far (up to max); returns how many. */
int h_log_cmds(const char *log, struct h_cmd *out, int max);
/* Lines containing needle. */
int h_log_count(const char *log, const char *needle);
/* Polls until at least count lines contain needle: another process writes
 * the log, so a line is there some time after what caused it. False on
 * timeout. */
bool h_log_wait(const char *log, const char *needle, int count, int timeout_ms);
/* Polls for the first cmd after index `from` whose belts are (l, r) m/s
 * within 1e-6; returns its index or -1 on timeout. */
int h_wait_belts(const char *log, int from, double l, double r, int timeout_ms,
                 struct h_cmd *found);

#endif
