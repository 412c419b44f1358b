/* The TCP side the stand-in simulators share (tests/daemon/standin_sim,
 * tests/usarsim_server): listening on 127.0.0.1 and printing "PORT n",
 * clients with a line buffer each, writes that copy their bytes, signal
 * handles, and the log the tests read: every line received and every
 * event ("#..."), as "<CLOCK_MONOTONIC us> <client> <text>". A simulator
 * keeps its own per-client state in a struct that starts with a struct
 * sim_client, and says what to do with what arrives through the hooks.
 * Built on libuv's default loop. */
#ifndef KN_TEST_SIM_SERVER_H
#define KN_TEST_SIM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uv.h>

#include "linebuf.h"

struct sim_server;

struct sim_client {
    uv_tcp_t tcp;
    struct sim_server *srv;
    struct sim_client *next;
    int id; /* 1, 2, ... in the order they connected */
    bool closing;
    struct kn_linebuf lb;
};

struct sim_hooks {
    size_t client_size; /* the simulator's client struct */
    size_t max_line;    /* longer lines are dropped and counted */
    /* Each non-empty line, once counted and logged; ctx: the client. */
    kn_linebuf_fn on_line;
    /* Each of these may be NULL. on_bytes sees what arrived before the
     * line buffer does; on_connect runs once the client is in the list
     * ("#connect" is logged); on_close when it goes: it logs the
     * "#disconnect" line and lets go of the simulator's own parts. */
    void (*on_bytes)(struct sim_client *c, const char *p, size_t n);
    void (*on_connect)(struct sim_client *c);
    void (*on_close)(struct sim_client *c);
};

struct sim_server {
    const char *name; /* the program, for messages */
    const struct sim_hooks *hooks;
    uv_loop_t *loop;
    uv_tcp_t tcp;
    uv_signal_t sig[4];
    int nsig;
    FILE *log;
    struct sim_client *clients;
    int next_id;
    bool paused;       /* clients' sockets are not read */
    uint64_t lines;    /* non-empty lines received, all clients */
    uint64_t overlong; /* lines dropped for their length */
};

/* Opens the log for appending (path NULL: no log) and ignores SIGPIPE (a
 * client that went away is not a crash); false after saying why. */
bool sim_open(struct sim_server *s, const char *name, const struct sim_hooks *hooks,
              const char *log_path);
/* Listens on 127.0.0.1:port (0: any; libuv sets SO_REUSEADDR, so a
 * restarted simulator takes its port back) and prints "PORT n"; false
 * after saying why. */
bool sim_listen(struct sim_server *s, int port, int backlog);
/* Starts handles for the signals (at most 4) on cb. */
void sim_on_signals(struct sim_server *s, const int *sigs, int n, uv_signal_cb cb);
/* Runs the loop until it is stopped or has nothing left; closes the log. */
void sim_run(struct sim_server *s);

void sim_log(struct sim_server *s, int id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Queues a copy of the bytes; nothing once the client is closing. */
void sim_send(struct sim_client *c, const char *text, size_t len);
void sim_close(struct sim_client *c);
/* Stops or resumes reading every client's socket. */
void sim_pause(struct sim_server *s, bool paused);
/* Closes every client, the listening socket and the signal handles, so
 * the loop ends once they are gone. */
void sim_shutdown(struct sim_server *s);

/* Real time for a fixed-step model. libuv re-arms a repeat timer from the
 * moment a late tick ran, so a model that steps once per tick falls
 * behind the wall clock on a busy machine, for good; a real simulator
 * keeps up. Set step_ns once; sim_clock_steps then says how many steps
 * the wall clock owes since the last call (the first call: 1), at most
 * 200 ms of them: a longer stall is dropped, not replayed in one burst. */
struct sim_clock {
    uint64_t step_ns, last_ns, owed_ns;
};
unsigned sim_clock_steps(struct sim_clock *c);

#endif
