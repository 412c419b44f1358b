/* Helpers for kenaf-simd's system tests: a scratch directory per test,
 * child processes (kenaf-simd, standin_sim, controllers) that die with the
 * test, a NOTIFY_SOCKET to see READY/STOPPING, the stats socket, KRP/1 over
 * real UDP sockets (built and checked with the codec), and the stand-in's
 * command log. Every wait has a deadline and polls a condition. */
#ifndef KN_TEST_HARNESS_H
#define KN_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "krp.h"

#define H_LONG_MS 10000  /* generous deadline for things that must happen */

uint64_t h_now_us(void);
void h_sleep_ms(int ms);

/* Scratch directory for the running test; removed at teardown unless
 * KN_KEEP_TMP is set. h_path returns a static buffer (rotating, 8 deep). */
void h_setup(void);
void h_teardown(void);
const char *h_path(const char *name);
void h_write_file(const char *path, const char *text);

struct h_proc {
    pid_t pid;
    int out_fd;             /* child's stdout */
    char err_path[256];     /* child's stderr */
    int status;             /* once reaped */
    bool reaped;
    bool wrapped;           /* runs under KN_WRAP (see below) */
};

/* Starts argv[0] with extra environment entries ("K=V", NULL-terminated,
 * may be NULL). The child gets SIGKILL when the test process dies. */
void h_spawn(struct h_proc *p, char *const argv[], char *const env[], const char *err_name);

/* KN_WRAP: a command prefix, split at spaces, put in front of the
 * processes the harness starts as the system under test: kenaf-simd
 * (h_daemon_start*) and the stand-in simulators (h_standin_start). For
 * memory checking, e.g.
 *   KN_WRAP="valgrind -q --leak-check=full --error-exitcode=99 ..."
 * (tools/run-valgrind). At teardown a wrapped process that still runs gets
 * SIGTERM instead of SIGKILL and up to 60 s to exit, so the wrapper can
 * finish its report; if a wrapped process exited with the status named by
 * --error-exitcode=N in KN_WRAP, the test fails. */
void h_spawn_wrapped(struct h_proc *p, char *const argv[], char *const env[], const char *err_name);
/* True when KN_WRAP is set. The wrapped programs then run many times
 * slower and their VmRSS is mostly the wrapper's: a test may relax what
 * that changes and the spec does not bound; the spec's bounds stay. */
bool h_wrapped(void);
/* Exit status (as from waitpid) within timeout_ms, or -1. */
int h_wait_exit(struct h_proc *p, int timeout_ms);
void h_signal(struct h_proc *p, int sig);
/* One line of the child's stdout, without its end of line. */
bool h_read_line(struct h_proc *p, char *buf, size_t len, int timeout_ms);
/* Text the child wrote on stderr so far (static buffer). */
const char *h_stderr(struct h_proc *p);

/* Runs examples/square unchanged through tools/kenaf-sim-run ($KN_SIM_RUN,
 * $KN_SQUARE) against the robot on 127.0.0.1:port and fails the test
 * unless it exits 0 within timeout_ms having shown a SIMULATED status
 * block; extra (may be NULL) goes into the failure message. Returns its
 * stdout (a static buffer). */
const char *h_run_square(int port, int timeout_ms, const char *extra);

/* ---- the stand-in simulator ---- */
struct h_standin {
    struct h_proc proc;
    int port;
    char log[256];
};
/* port 0: any free port. extra: more arguments (NULL-terminated) or NULL. */
void h_standin_start(struct h_standin *s, int port, const char *name, const char *const extra[]);
void h_standin_kill(struct h_standin *s);  /* SIGKILL, reaped */

/* ---- kenaf-simd ---- */
#define H_MAX_ROBOTS 4
struct h_daemon {
    struct h_proc proc;
    char config[256];
    char stats[256];
    char notify_path[256];
    int notify_fd;
    char notes[8192];       /* every notify message received, '\n'-joined */
    int nrobots;
    int port[H_MAX_ROBOTS]; /* KRP/1 UDP ports, from the stats */
};
/* robots_json: the "robots" array text. Writes the config (stats socket
 * and log level added), starts kenaf-simd with NOTIFY_SOCKET, waits for
 * READY=1 and reads the robots' UDP ports from the stats. */
void h_daemon_start(struct h_daemon *d, const char *robots_json);
/* The same with extra environment entries ("K=V", NULL-terminated). */
void h_daemon_start_env(struct h_daemon *d, const char *robots_json, char *const env[]);
/* Just writes the config file the daemon reads (for reload tests). */
void h_daemon_write_config(struct h_daemon *d, const char *robots_json);
/* Waits until a notify message containing `what` arrived (counting from
 * the start); true when seen. */
bool h_notify_seen(struct h_daemon *d, const char *what, int timeout_ms);
/* Number of notify messages containing `what` seen so far (after draining). */
int h_notify_count(struct h_daemon *d, const char *what);

cJSON *h_stats(struct h_daemon *d);                 /* caller deletes */
/* A number from the stats by a dotted path ("robots.0.drops.bad_magic");
 * booleans read 0/1; fails the test if the path is missing. */
double h_stat(struct h_daemon *d, const char *path);
const char *h_stat_str(struct h_daemon *d, const char *path); /* static copy */
/* Polls until h_stat(path) >= min; true when reached. */
bool h_wait_stat(struct h_daemon *d, const char *path, double min, int timeout_ms);

/* Polls until h_stat(path) == want. */
bool h_wait_stat_eq(struct h_daemon *d, const char *path, double want, int timeout_ms);

/* ---- KRP/1 over UDP ---- */
struct h_udp {
    int fd;
    uint32_t seq;
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
uint32_t h_crawler(struct h_udp *u, uint32_t seq, uint16_t flags, int32_t l, int32_t r);
uint32_t h_flipper(struct h_udp *u, uint32_t seq, uint16_t flags, uint8_t mask, const int32_t cdeg[4]);
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
/* Polls for the first cmd after index `from` whose belts are (l, r) m/s
 * within 1e-6; returns its index or -1 on timeout. */
int h_wait_belts(const char *log, int from, double l, double r, int timeout_ms, struct h_cmd *found);

#endif
