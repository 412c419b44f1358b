/* The stand-in backend's JSON-lines link (docs/custom-simulator.md):
 * the pure parts, parsing simulator lines and formatting daemon lines,
 * exposed for the unit tests. Neutral SI units on both sides, so nothing
 * is converted here. */
#ifndef KN_BACKEND_STANDIN_H
#define KN_BACKEND_STANDIN_H

#include <stdbool.h>
#include <stddef.h>

#include "state.h"

#define KN_STANDIN_MAX_LINE 4096

enum kn_standin_kind {
    KN_STANDIN_MALFORMED = -1, /* not JSON, not an object, a bad field */
    KN_STANDIN_OTHER = 0,      /* well-formed, type unknown: ignored */
    KN_STANDIN_READY,
    KN_STANDIN_STATE,
};

/* Parses one line. For STATE, *s holds the fields the line carried and
 * s->have says which (the others are 0). why (may be NULL) names the
 * problem of a MALFORMED line. */
enum kn_standin_kind kn_standin_parse(const char *line, size_t len, struct kn_state *s,
                                      const char **why);

/* Copies the fields src->have names into dst (a state line may carry only
 * some fields; the rest keep their last value). */
void kn_standin_merge(struct kn_state *dst, const struct kn_state *src);

/* One command line, '\n'-terminated; returns its length (0 if cap is too
 * small). Flippers outside the mask are sent as null. */
size_t kn_standin_format_cmd(char *buf, size_t cap, const struct kn_command *c, bool reapply);

/* The greeting the daemon sends first. */
size_t kn_standin_format_hello(char *buf, size_t cap, const char *robot);

#endif
