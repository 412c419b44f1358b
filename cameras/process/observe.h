/* kenaf-cameras' side of KRP/1: each robot watched as an observer (HELLO
 * with the observe flag, SUBSCRIBE, WORLD_REQ, BYE at the end; it never
 * drives), on a thread of its own that polls the robots' UDP sockets. What
 * it learns (the world description, the latest STATUS) waits under a lock
 * for the render thread, which takes copies (kn_cobs_take). */
#ifndef KN_COBS_H
#define KN_COBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"

#define KN_COBS_MAX_ROBOTS 8
#define KN_COBS_NAME_LEN 32

struct kn_cobs_robot_opt {
    char name[KN_COBS_NAME_LEN]; /* the streams' path segment */
    char host[256];
    uint16_t port;
};

/* What the render thread gets of one robot. */
struct kn_cobs_view {
    bool have_status; /* a STATUS arrived once: there is a pose to draw */
    bool up;          /* STATUS within the last second */
    struct kn_krp_status status;
    uint64_t status_wall_ns; /* when it came (CLOCK_MONOTONIC) */
    unsigned world_gen;      /* changes with every new world document */
    char *world;             /* a copy when world_gen moved past `since`, else NULL */
    size_t world_len;
};

struct kn_cobs;

/* Opens the robots' sockets (resolving their addresses): NULL and the
 * reason in err on failure. */
struct kn_cobs *kn_cobs_open(const struct kn_cobs_robot_opt *robots, size_t n, char *err,
                             size_t errlen);
/* Starts the thread: 0, or -1. */
int kn_cobs_start(struct kn_cobs *o);
/* Stops the thread, says BYE to every robot that answered, closes. */
void kn_cobs_close(struct kn_cobs *o);
/* Robot i's latest state; the world document is copied (the caller frees
 * v->world) only when its generation differs from `since`. */
void kn_cobs_take(struct kn_cobs *o, size_t i, unsigned since, struct kn_cobs_view *v);
uint64_t kn_cobs_now_ns(void);

#endif
