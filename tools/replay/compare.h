/* Comparing the robot's answers in a capture with the answers a replay
 * got. Each answer becomes a key (which request it answers: seq and
 * type, per controller) and a value made of its fields that do not
 * depend on time: the robot's own seq, the clock, pose, speeds and
 * sensor readings, the STALE flag and a session HELLO_ACK's token (random
 * by design; its role counts) are left out. Subscription pushes
 * (STATUS with req_seq 0) answer no request and are only counted. */
#ifndef KN_REPLAY_COMPARE_H
#define KN_REPLAY_COMPARE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kn_compare_answer {
    int ctl;       /* which controller it went to */
    char key[40];  /* "CRAWLER#12", "HELLO#1", "header#0" */
    char val[200]; /* "ERROR RANGE", "STATUS flags=BACKEND_UP|SIMULATED", ... */
};

enum kn_compare_kind { KN_COMPARE_ANSWER = 1, KN_COMPARE_PUSH = 0, KN_COMPARE_UNDECODABLE = -1 };

/* Describes one robot->controller datagram. last_hello: seq of the latest
 * HELLO this controller sent before it (HELLO_ACK names no seq). */
enum kn_compare_kind kn_compare_describe(const uint8_t *data, size_t len, uint32_t last_hello,
                                         struct kn_compare_answer *a);

struct kn_compare_result {
    size_t requests, requests_matching, requests_diverging;
    size_t answers_captured, answers_replayed;
    size_t answers_matching, answers_missing, answers_extra;
};

/* Sorts both arrays and compares them per (controller, key) as multisets.
 * Diverging requests are listed on report (at most max_lines; report may
 * be NULL). */
void kn_compare_answers(struct kn_compare_answer *cap, size_t ncap, struct kn_compare_answer *rep,
                        size_t nrep, struct kn_compare_result *res, FILE *report, int max_lines);

#endif
