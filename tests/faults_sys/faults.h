/* Helpers shared by the fault-tolerance system tests (tests/faults_sys):
 * the fault_ctl controller process and its report lines, STATUS polling
 * with time stamps, a kenaf-engine started by the test, process memory.
 * Built on tests/daemon/harness.h; the cases run with h_run_cases. */
#ifndef KN_FAULTS_H
#define KN_FAULTS_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

#include "harness.h"

/* KENAF library results as fault_ctl prints them (kenaf.h). */
#define F_OK 0
#define F_ETIMEOUT (-2)
#define F_EBACKEND (-5)

/* ---- fault_ctl ---- */
#define F_CTL_LINES 1024
struct f_line {
    char kind[8];   /* INIT, ST, RESULT, RC, DONE */
    uint64_t t_us;  /* CLOCK_MONOTONIC, as h_now_us */
    char rest[120]; /* what follows the time stamp */
};
struct f_ctl {
    struct h_proc proc;
    struct f_line line[F_CTL_LINES];
    int n;
};
/* Starts fault_ctl (KN_FAULT_CTL) against 127.0.0.1:port with the steps
 * (NULL-terminated) and extra environment entries (may be NULL). Waits
 * for its INIT line, which must report 0. */
void f_ctl_start(struct f_ctl *c, int port, const char *const steps[], char *const env[]);
/* Index of the first line at or after `from` whose kind is `kind` (and,
 * if rest_prefix is not NULL, whose rest starts with it), reading more
 * lines as needed; -1 on timeout. */
int f_ctl_wait(struct f_ctl *c, int from, const char *kind, const char *rest_prefix,
               int timeout_ms);
/* Reads whatever the controller printed so far without waiting long. */
void f_ctl_drain(struct f_ctl *c);
/* The rc of a line "ST <t> <rc> <flags>" / "RESULT <t> <step> <rc> ...". */
int f_line_rc(const struct f_line *l);
unsigned f_line_flags(const struct f_line *l);

/* ---- STATUS ---- */
struct f_st {
    struct kn_krp_status s;
    uint64_t t_us; /* when the answer arrived */
};
/* One STATUS_REQ round trip, skipping pushes and other answers. */
struct f_st f_status(struct h_udp *u);
/* Polls STATUS (every poll_ms) until pred is true; false on timeout. The
 * last STATUS is left in *out either way. */
bool f_status_until(struct h_udp *u, bool (*pred)(const struct kn_krp_status *, void *), void *arg,
                    int poll_ms, int timeout_ms, struct f_st *out);

/* ---- processes ---- */
/* Starts kenaf-engine (KN_ENGINE) on a free port with extra arguments
 * (NULL-terminated, may be NULL); returns its port. Wrapped like the
 * stand-ins (KN_WRAP). */
int f_engine_start(struct h_proc *p, const char *const extra[]);

/* ---- numbers for docs/robustness.md ---- */
/* Prints "FIGURE <name>: <text>" on stdout (meson keeps it in the test
 * log) so the measured figures can be quoted. */
void f_figure(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Milliseconds between two h_now_us stamps. */
double f_ms(uint64_t from, uint64_t to);

#endif
