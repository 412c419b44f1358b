/* The "gz" backend: kenaf-simd as a gz-transport node of modern Gazebo
 * (gz-sim Fortress and later; docs/gz.md). What the tests and other daemon
 * parts use: the ops, world control, and the pure feedback part that turns
 * /world/<W>/clock, the model's pose and its joint states into the neutral
 * state (unit tested on its own). */
#ifndef KN_BACKEND_GZ_H
#define KN_BACKEND_GZ_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "convert.h"
#include "gzt_msgs.h"
#include "state.h"

extern const struct kn_backend_ops kn_gzsim_ops;
/* The entry point kenaf-simd looks up in the module kenaf-simd-gz.so. */
const struct kn_backend_ops *kn_gzsim_module_ops(void);

/* Calls the world's /world/<W>/control service with c. Returns 0 when the
 * request went out (its Boolean answer is counted in the stats), -1 when l
 * is no gz link or the world offers no control service (yet). */
int kn_gzsim_world_control(struct kn_link *l, const struct kn_gzt_world_ctl *c);

/* The stats-socket command "world ROBOT pause | play | step [N] |
 * reset [all|time|model]": the world control request for that gz robot
 * (pause, step and reset leave the world paused, play runs it). Returns a
 * malloc'd JSON reply {"ok":true,"robot":...,"sent":...} or
 * {"ok":false,"error":...}; the world's Boolean answer is counted in the
 * robot's stats (control_ok, control_refused). */
char *kn_gzsim_command(const char *args);

/* ---- feedback (pure) ------------------------------------------------------ */

/* Sim time stepping back by more than this is a world reset. */
#define KN_GZSIM_FB_RESET_NS 500000000LL
/* No new pose for this long while sim time runs: the model is at rest. */
#define KN_GZSIM_FB_REST_NS 250000000LL

struct kn_gzsim_fb {
    struct kn_conv_table conv;
    struct kn_state st;
    int64_t t_ns; /* newest sim time */
    bool have_time;
    int npos; /* pose history (oldest first) */
    double pos[3][3];
    int64_t pos_t[3];
    double rpy_prev[3];
    bool have_rpy;
    int64_t pose_t_ns; /* sim time of the newest pose */
    uint64_t resets, clocks, poses, joint_msgs, bad_numbers;
};

void kn_gzsim_fb_init(struct kn_gzsim_fb *f, const struct kn_conv_table *t);
/* A new world (reconnect, reset): the histories go; belt travel and the
 * last values stay. */
void kn_gzsim_fb_restart(struct kn_gzsim_fb *f);
/* Each returns true when f->st changed and is worth reporting. */
bool kn_gzsim_fb_clock(struct kn_gzsim_fb *f, int64_t sim_ns);
/* A pose of the model (z up, quaternion x, y, z, w) at sim time stamp_ns
 * (-1: the newest clock). Derives attitude, body rates, accelerometer and,
 * from the body's motion through the TrackedVehicle kinematics, belt
 * speeds and travel. */
bool kn_gzsim_fb_pose(struct kn_gzsim_fb *f, const double pos[3], const double q[4],
                      int64_t stamp_ns);
/* Flipper joint positions (rad), bit k of found for those present. */
bool kn_gzsim_fb_joints(struct kn_gzsim_fb *f, const double joint_rad[KN_NFLIPPERS],
                        uint32_t found);

#endif
