/* Helpers for kenaf-console's system tests: a private tmux server (a child
 * of the test, so it dies with it) in which the console runs on a real
 * terminal; keys go in with send-keys, the screen comes back with
 * capture-pane. Builds on the daemon tests' harness (scratch directory,
 * processes, kenaf-simd, stats, KRP/1). */
#ifndef KN_CONSOLE_HARNESS_H
#define KN_CONSOLE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* Exit status 77 tells meson the test was skipped. */
#define C_SKIP 77

/* True when a tmux binary answers "tmux -V". */
bool c_have_tmux(void);

struct c_console {
    struct h_proc server; /* tmux -D */
    char sock[256];
    char err[256]; /* the console's stderr */
    char rc[256];  /* its exit status, written when it ends */
};

/* Starts a tmux server and, in a 100x40 window with LANG=C.UTF-8, the
 * console against 127.0.0.1:port with config_json (written to a file; NULL
 * = the defaults with the joystick off) and extra arguments (may be NULL). */
void c_console_start(struct c_console *c, int port, const char *config_json, const char *args);
/* Starts a tmux server and, in the same window, the shell command line
 * `command` in place of the console (kenaf-sim-run --operator with the
 * console inside it); its exit status is what c_wait_exit reads. */
void c_window_start(struct c_console *c, const char *command);
/* Runs the console again in the same server (after it ended). */
void c_console_restart(struct c_console *c);
/* Closes the console's window (tmux kill-session), as an operator closing
 * the terminal: the console gets SIGHUP. */
void c_close_window(struct c_console *c);
/* Resizes the console's window (tmux resize-window), as an operator
 * dragging the terminal's corner: the console gets SIGWINCH. */
void c_resize(struct c_console *c, int cols, int rows);
/* send-keys: a key name ("Space", "Up") or, literal, characters. */
void c_keys(struct c_console *c, const char *keys, bool literal);
/* The screen as text (static buffer). */
const char *c_screen(struct c_console *c);
/* Polls the screen until it contains needle; true when seen. */
bool c_wait_screen(struct c_console *c, const char *needle, int timeout_ms);
/* Polls the screen until it no longer contains needle. */
bool c_wait_screen_gone(struct c_console *c, const char *needle, int timeout_ms);
/* The console's exit status once it ended (-1 while it runs or on
 * timeout). */
int c_wait_exit(struct c_console *c, int timeout_ms);
/* The console's stderr so far (static buffer). */
const char *c_stderr(struct c_console *c);
/* The running console's process id (the kenaf-console process under the
 * window's shell), or -1. */
int c_console_pid(struct c_console *c);

/* Engine-backed kenaf-simd (it spawns kenaf-engine), up and fresh, with
 * 127.0.0.1 (the console's address) a configured console. */
void c_daemon_engine(struct h_daemon *d);
/* The same with no console configured: the console is one station of the
 * e-stop circuit like any other. */
void c_daemon_engine_station(struct h_daemon *d);

/* Presses key every 40 ms (as a terminal's auto-repeat does) until
 * done(arg) holds or timeout_ms passes; true when it held. */
bool c_hold_until(struct c_console *c, const char *key, bool literal, bool (*done)(void *arg),
                  void *arg, int timeout_ms);

#endif
