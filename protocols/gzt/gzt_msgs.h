/* The gz/ignition messages kenaf-sim's gz backend sends and reads, as
 * bare protobuf bytes (the data frame of a gz-transport message):
 * Twist (/model/<M>/cmd_vel), Double (joint cmd_pos), WorldControl (the
 * /world/<W>/control request) and its Boolean reply, Pose and Pose_V
 * (PosePublisher, /world/<W>/pose/info), Clock (/world/<W>/clock) and the
 * Model that JointStatePublisher sends. Sans-I/O; decoders unpack into an
 * arena they reset first. */
#ifndef KN_GZT_MSGS_H
#define KN_GZT_MSGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pbarena.h"

/* Each encoder returns the length, or 0 when it does not fit in cap. */

/* Twist{linear (x, 0, 0), angular (0, 0, z)}: TrackedVehicle reads
 * linear.x and angular.z. */
size_t kn_gzt_enc_twist(uint8_t *buf, size_t cap, double linear_x, double angular_z);
size_t kn_gzt_enc_double(uint8_t *buf, size_t cap, double v);
size_t kn_gzt_enc_boolean(uint8_t *buf, size_t cap, bool v);
/* Pose{name, position, orientation (x, y, z, w)}; with vector, a Pose_V
 * holding that one Pose. */
size_t kn_gzt_enc_pose(uint8_t *buf, size_t cap, bool vector, const char *name, const double pos[3],
                       const double q[4]);
size_t kn_gzt_enc_clock(uint8_t *buf, size_t cap, int64_t sim_ns);

/* World control: every request sets the pause state (false runs the
 * world), so a step is sent with pause true. */
struct kn_gzt_world_ctl {
    bool pause;
    bool step;
    uint32_t multi_step;
    bool reset_all, reset_time, reset_model;
};
size_t kn_gzt_enc_world_control(uint8_t *buf, size_t cap, const struct kn_gzt_world_ctl *c);
int kn_gzt_dec_world_control(struct kn_pbarena *a, const uint8_t *p, size_t n,
                             struct kn_gzt_world_ctl *c);

/* Decoders: 0 on success, -1 for bytes that are no such message. */
int kn_gzt_dec_twist(struct kn_pbarena *a, const uint8_t *p, size_t n, double *linear_x,
                     double *angular_z);
int kn_gzt_dec_double(struct kn_pbarena *a, const uint8_t *p, size_t n, double *v);
int kn_gzt_dec_boolean(struct kn_pbarena *a, const uint8_t *p, size_t n, bool *v);
/* Sim time of a Clock (its sim field; -1 when absent or malformed). */
int kn_gzt_dec_clock(struct kn_pbarena *a, const uint8_t *p, size_t n, int64_t *sim_ns);

/* The pose of `name` in a Pose (vector false) or Pose_V: the entry whose
 * name is `name`, or whose header holds child_frame_id `name` (how
 * PosePublisher labels its poses). *stamp_ns: the message's header stamp
 * (or the pose's), -1 without one. Returns 1 when found, 0 when the
 * message holds no pose of it, -1 when malformed. A missing orientation
 * reads as the identity, a missing position as the origin. */
int kn_gzt_dec_pose_of(struct kn_pbarena *a, const uint8_t *p, size_t n, bool vector,
                       const char *name, double pos[3], double q[4], int64_t *stamp_ns);

/* Joint positions from JointStatePublisher's Model: for each of the nj
 * names, its joint's axis1.position into pos[k] and bit k in *found.
 * *stamp_ns as above. 0, or -1 when malformed. */
int kn_gzt_dec_joints(struct kn_pbarena *a, const uint8_t *p, size_t n, const char *const *names,
                      int nj, double *pos, uint32_t *found, int64_t *stamp_ns);
/* Encodes such a Model (name, joints with axis1.position), for stand-ins
 * and tests. */
size_t kn_gzt_enc_joints(uint8_t *buf, size_t cap, const char *model, const char *const *names,
                         int nj, const double *pos);

#endif
