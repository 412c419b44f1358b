/* Test helpers for kenaf-engine's server, on top of tests/common (scratch
 * directory, processes, loopback sockets): start the engine on an
 * ephemeral port (its "PORT n" line), raw TCP clients that send USARSim
 * lines and read the server's lines back (tokenized and parsed with the
 * codec), and the KENAF {Cmd Stats} counters. Every wait has a deadline;
 * the tests run with h_setup/h_teardown. */
#ifndef KN_TEST_ENG_CLIENT_H
#define KN_TEST_ENG_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"
#include "harness_net.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "usarsim_codec.h"

struct ec_engine {
    struct h_proc proc;
    int port;
};

/* Starts kenaf-engine (env KN_ENGINE) with --listen 127.0.0.1:0 and the
 * extra arguments (NULL-terminated, may be NULL); waits for its PORT line.
 * The process is killed at teardown and when the test dies. */
void ec_engine_start(struct ec_engine *e, const char *const extra[]);

struct ec_conn {
    int fd;
    bool eof;
    size_t len;
    char buf[1 << 17];
    char last[KN_USAR_MAX_LINE + 1]; /* the last line returned */
    struct kn_usar_line tl;          /* ... tokenized (views into last) */
};

void ec_connect(struct ec_conn *c, int port);
void ec_close(struct ec_conn *c);
/* Sends the formatted text as is (add "\r\n" yourself). */
void ec_send(struct ec_conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ec_send_raw(struct ec_conn *c, const void *data, size_t len);

/* Next line into c->last (tokenized into c->tl when it tokenizes);
 * false on timeout or end of stream. */
bool ec_line(struct ec_conn *c, int timeout_ms);
/* Reads until a line whose head is `head` (case-insensitive) arrives;
 * with `type` also its {Type}, with `cmd` (KENAF lines) its {Cmd}. */
bool ec_wait_head(struct ec_conn *c, const char *head, const char *type, int timeout_ms);
bool ec_wait_kenaf(struct ec_conn *c, const char *cmd, int timeout_ms);
/* The next SEN of that type with {Time} >= min_time (types without Time:
 * any). */
bool ec_wait_sen(struct ec_conn *c, enum kn_usar_sen_type type, double min_time,
                 struct kn_usar_sen *out, int timeout_ms);
bool ec_wait_sta(struct ec_conn *c, double min_time, struct kn_usar_sta *out, int timeout_ms);

/* KENAF {Cmd Stats} round trip: the reply line stays in c->last/c->tl. */
void ec_stats(struct ec_conn *c);
/* One counter of the last Stats reply (fails the test when absent). */
int64_t ec_stat(struct ec_conn *c, const char *key);
/* Stats round trip, then that counter. */
int64_t ec_stat_now(struct ec_conn *c, const char *key);

/* The USARSim conversion table the engine uses (wheel radius of the
 * Kenaf robot file, 0.08 m; 4000 encoder ticks per metre). */
const struct kn_conv_table *ec_table(void);

#endif
