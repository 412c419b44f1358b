/* The "gazebo" backend (Gazebo Classic transport, docs/gazebo.md): what
 * other daemon parts and the tests use. World control for lockstep and
 * tools, and the pure feedback part that turns Gazebo's ~/world_stats,
 * ~/pose/info and ~/<model>/tracks_speed into the neutral state, exposed
 * for the unit tests. */
#ifndef KN_BACKEND_GAZEBO_H
#define KN_BACKEND_GAZEBO_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"
#include "convert.h"
#include "gzc_codec.h"
#include "state.h"

extern const struct kn_backend_ops kn_gazebo_ops;

/* ---- world control ------------------------------------------------------ */

/* Publishes one WorldControl on /gazebo/<world>/world_control (pause, step,
 * multi_step, reset; gzc_codec.h). Returns how many subscribers (Gazebo's
 * World) it went to; 0 when the world has not subscribed yet; -1 when l
 * is not a gazebo link or its master is not connected, or c asks nothing. */
int kn_gazebo_world_control(struct kn_link *l, const struct kn_gzc_world_ctl *c);

/* What ~/world_stats said last. false when nothing came yet. */
struct kn_gazebo_world_status {
    bool known;
    bool paused;
    uint64_t iterations;
    double sim_time_s;
};
bool kn_gazebo_world_status(struct kn_link *l, struct kn_gazebo_world_status *out);

/* Control socket: with KENAF_GAZEBO_CONTROL_DIR set, each gazebo robot
 * listens on $KENAF_GAZEBO_CONTROL_DIR/<robot>.sock for text lines:
 *   pause | play | step [N] | reset [all|time|model] | status
 * answered by one line "ok ..." or "error ...". */
#define KN_GAZEBO_CONTROL_ENV "KENAF_GAZEBO_CONTROL_DIR"

/* ---- feedback (pure) -------------------------------------------------------- */

/* How far back sim time may step before it counts as a world reset (the
 * topics arrive on separate connections, so small reorderings happen). */
#define KN_GAZEBO_FB_RESET_NS 500000000LL
/* No pose of the model for this long while sim time runs: Gazebo sends only
 * poses that changed, so the model is at rest (rates 0, gravity only). */
#define KN_GAZEBO_FB_REST_NS 250000000LL

struct kn_gazebo_fb {
    struct kn_conv_table conv;
    char model[64];
    /* flipper k's link in ~/pose/info: "model::link" candidates */
    char flipper_link[KN_NFLIPPERS][2][160];
    struct kn_state st;

    int64_t t_ns; /* newest sim time seen */
    bool have_time;
    bool paused;
    uint64_t iterations;
    bool have_stats;

    double belt_speed[2]; /* ~/tracks_speed, m/s */
    int64_t belt_t_ns;    /* belt travel integrated up to here */

    int npos;         /* samples in the pose history (0..3) */
    double pos[3][3]; /* oldest first */
    int64_t pos_t[3];
    double rpy_prev[3];
    int64_t rpy_t;
    bool have_rpy;
    int64_t pose_t_ns;     /* sim time of the last pose of the model */
    uint8_t flippers_seen; /* bit k: flipper k's link was found once */
    bool model_seen;       /* a pose of the model came on this connection */
    char other_model[64];  /* a model the world has instead, for the warning */

    uint64_t resets, stats_msgs, pose_msgs, pose_without_model, tracks_msgs;
    uint64_t bad_quaternion, bad_numbers;
};

/* joints: the configured joint names (FL, FR, RL, RR), scoped
 * ("model::joint") or not. A flipper's link is links[k] when given (not
 * NULL or ""; "model::" added unless scoped), else it is found under the
 * joint's name without a trailing "_joint", "_jnt", "_j", "Joint" or
 * "_hinge", or under the joint's own name. links may be NULL. */
void kn_gazebo_fb_init(struct kn_gazebo_fb *f, const struct kn_conv_table *t, const char *model,
                       const char *const joints[KN_NFLIPPERS],
                       const char *const links[KN_NFLIPPERS]);

/* A new connection: the derivation histories go, belt travel and the last
 * values stay (a reconnect is no reason for encoders to jump). */
void kn_gazebo_fb_restart(struct kn_gazebo_fb *f);

/* Each returns true when f->st changed and is worth reporting. */
bool kn_gazebo_fb_world_stats(struct kn_gazebo_fb *f, const Gazebo__Msgs__WorldStatistics *m);
bool kn_gazebo_fb_poses(struct kn_gazebo_fb *f, const Gazebo__Msgs__PosesStamped *m);
bool kn_gazebo_fb_tracks(struct kn_gazebo_fb *f, const Gazebo__Msgs__Vector2d *m);

/* The JointCmd name of flipper joint `joint` of `model` ("model::joint"
 * unless already scoped). -1 when it does not fit. */
int kn_gazebo_scoped_joint(char *out, size_t cap, const char *model, const char *joint);

#endif
