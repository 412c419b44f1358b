/* The JSON text frames kenaf-view sends its pages, and the one kind it
 * takes from them, as pure functions (tools/view/web/ reads them; the
 * contract is docs/view.md, "WebSocket messages"). A STATUS becomes a
 * "state" message in SI units and KRP/1 frames; hello, world and link
 * messages describe the robots. Nothing here does I/O. */
#ifndef KN_VIEW_JSON_H
#define KN_VIEW_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "krp.h"

/* A state message is at most this long. */
#define KN_VJSON_STATE_MAX 1024

/* {"type":"state","robot":id,...}; returns its length (0 if cap is too
 * small). seq: the server's frame counter for the robot; srv_us: when the
 * STATUS arrived (server monotonic clock, microseconds). */
size_t kn_vjson_state(char *out, size_t cap, unsigned robot, const struct kn_krp_status *s,
                      uint64_t seq, uint64_t srv_us);

/* {"type":"link","robot":id,"up":b[,"reason":"..."]}; reason may be NULL. */
size_t kn_vjson_link(char *out, size_t cap, unsigned robot, bool up, const char *reason);

struct kn_vjson_robot {
    const char *name;
    const char *address;
};

/* {"type":"hello","server":"kenaf-view VERSION","robots":[{"id","name",
 * "address"}...]}, and "cameras":URL when cameras is not NULL (the page
 * then shares the PTZ camera with kenaf-cameras there): a malloc'ed text
 * (free()), NULL when out of memory. */
char *kn_vjson_hello(const char *version, const struct kn_vjson_robot *robots, unsigned n,
                     const char *cameras);

/* {"type":"world","robot":id,"world":DOC}: DOC is inserted as it is, so
 * it must be one JSON value (kn_vjson_world_ok); NULL doc gives null.
 * malloc'ed (free()), *len its length; NULL when out of memory. */
char *kn_vjson_world(unsigned robot, const char *doc, size_t doclen, size_t *len);

/* {"type":"trial","robot":id,"trial":{...}} with the trial's state in SI
 * units and words (docs/view.md), or "trial":null when t is NULL (the
 * robot runs none). Its length, 0 if cap is too small. */
#define KN_VJSON_TRIAL_MAX 768
size_t kn_vjson_trial(char *out, size_t cap, unsigned robot, const struct kn_krp_trial *t);

/* True when doc is one JSON object (the only kind of world document). */
bool kn_vjson_world_ok(const char *doc, size_t len);

/* What a page sent. */
enum kn_vjson_in {
    KN_VJSON_REPORT = 0, /* {"type":"report", ...}: measurements */
    KN_VJSON_BAD_JSON,   /* not a JSON object */
    KN_VJSON_BAD_TYPE,   /* an object, but not a report */
};
enum kn_vjson_in kn_vjson_classify(const char *msg, size_t len);

#endif
