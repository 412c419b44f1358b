/* One simulated robot in the daemon: its KRP/1 UDP socket, its rule engine
 * (rules.h), its simulator link (backend.h) and the timer that drives the
 * watchdog and subscriptions. This file only moves bytes between them. */
#ifndef KN_ROBOT_H
#define KN_ROBOT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "config.h"

struct kn_robot;

/* Called when the robot's simulator link comes up or goes down. */
typedef void (*kn_robot_link_fn)(void *ctx, struct kn_robot *r, bool up);

/* Binds the UDP socket (errors are immediate: -1 and a message in err) and
 * starts connecting to the simulator. */
int kn_robot_start(uv_loop_t *loop, const struct kn_cfg_robot *cfg, kn_robot_link_fn on_link,
                   void *ctx, struct kn_robot **out, char *err, size_t errlen);

/* Belts 0 to the simulator, flushed (bounded wait), then everything closed
 * and freed; done(arg) afterwards. The UDP port is free on return. */
void kn_robot_stop(struct kn_robot *r, void (*done)(void *arg), void *arg);

const char *kn_robot_name(const struct kn_robot *r);
const char *kn_robot_listen(const struct kn_robot *r); /* actual address:port */
bool kn_robot_link_up(const struct kn_robot *r);

/* The stats-socket command "estop engage|release|status" for this robot,
 * asked by `who` (logged): a malloc'd JSON reply with the engagements
 * that held before and hold now. */
char *kn_robot_estop_command(struct kn_robot *r, const char *action, const char *who);

/* Appends this robot's stats object to arr. */
void kn_robot_stats(struct kn_robot *r, cJSON *arr);

#endif
