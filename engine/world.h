/* The engine's world API: one ODE world with a terrain and any number of
 * Kenaf robots (tracks by Contact Surface Motion, flippers on torque-limited
 * servos). The scenario runner and the USARSim-protocol server both drive
 * the simulation only through these calls. Single-threaded; a world keeps
 * its own copy of ODE's random seed so worlds stepped in turn stay
 * bit-exact replays of themselves. */
#ifndef KN_ENGINE_WORLD_H
#define KN_ENGINE_WORLD_H

#include <stdint.h>

#include "params.h"
#include "state.h"
#include "terrain.h"

/* Robot parts, for contact bookkeeping. */
enum kn_world_part {
    KN_PART_TRACK_L = 0,
    KN_PART_TRACK_R = 1,
    KN_PART_FLIPPER_FL = 2, /* + KN_FL .. KN_RR */
    KN_PART_CHASSIS = 6,
    KN_NPARTS = 7,
};

/* Pose of the robot's body frame (origin at the geometric centre of the
 * main tracks, on the pulley axes; x forward, y left, z up). Angles are
 * roll, pitch, yaw (Z-Y-X), pitch + lowers the nose. */
struct kn_pose {
    double x, y, z;
    double roll, pitch, yaw;
};

/* Ground truth and diagnostics beyond struct kn_state. */
struct kn_truth {
    double origin[3]; /* body frame origin, world [m] */
    double cog[3];    /* base body CoG, world [m] */
    double rot[9];    /* body -> world rotation, row-major */
    double vel[3];    /* CoG velocity, world [m/s] */
    double omega[3];  /* angular velocity, world [rad/s] */
    double flipper_rate[KN_NFLIPPERS];
    double belt_cmd[2];
    int contacts;        /* contact points on this robot in the last step */
    double max_depth;    /* deepest of them [m] */
    double contact_zmin; /* lowest / highest contact point z (0 when none) */
    double contact_zmax;
    unsigned part_tags[KN_NPARTS]; /* KN_TAG_* bits each part touched */
    double part_zmax[KN_NPARTS];   /* highest contact point of each part (0: none) */
    double kinetic_j;              /* all bodies of the robot */
    double potential_j;            /* m g z, all bodies */
};

/* Points of the left-side outline in the world, for plots: main pulley
 * centres front/rear and flipper tip centres FL/RL, with their radii. */
struct kn_outline {
    double main_front[3], main_rear[3], tip_front[3], tip_rear[3];
    double main_r, tip_r;
};

struct kn_world;

/* Calls dInitODE2 on first use (dCloseODE after the last world is destroyed).
 * Copies pp. NULL on failure. */
struct kn_world *kn_world_create(const struct kn_physics_params *pp);
void kn_world_destroy(struct kn_world *w);
const struct kn_physics_params *kn_world_physics(const struct kn_world *w);

/* Replaces the terrain (the world copies it). Robots stay where they are. */
int kn_world_set_terrain(struct kn_world *w, const struct kn_terrain *t);

/* Height of the terrain's top surface at (x, y); -INFINITY if none. */
double kn_world_ground_z(struct kn_world *w, double x, double y);

/* Adds a robot at pose with initial flipper angles (NULL = all 0). With
 * pose->z NaN the robot is placed with its tracks 5 mm above the ground at
 * (x, y). The world holds any number of robots (their storage grows; the
 * server caps a world at KN_ENGINE_MAX_ROBOTS, engine_limits.h). Returns
 * its id (>= 0, the lowest free one), or -1 when an argument is out of
 * range or memory runs out. */
int kn_world_spawn(struct kn_world *w, const struct kn_robot_params *rp, const struct kn_pose *pose,
                   const double flippers[KN_NFLIPPERS]);
int kn_world_remove(struct kn_world *w, int id);
/* Puts robot id at pose (z NaN: on the ground, as kn_world_spawn) with
 * its flippers at the given angles, at rest: velocities, belt targets and
 * flipper targets as at a spawn. Its id, spawn pose (kn_world_reset),
 * encoder counts and battery stay. -1 for an unknown id or a bad pose. */
int kn_world_place(struct kn_world *w, int id, const struct kn_pose *pose,
                   const double flippers[KN_NFLIPPERS]);
int kn_world_robot_valid(const struct kn_world *w, int id);

/* Commands; speeds and angles are clamped to the robot's limits. Return -1
 * for an unknown id or a non-finite value. */
int kn_world_set_belts(struct kn_world *w, int id, double left, double right);
/* Belt speeds from a body twist: v -+ omega * B / (2 chi). */
int kn_world_set_twist(struct kn_world *w, int id, double v, double omega);
int kn_world_set_flippers(struct kn_world *w, int id, const double target[KN_NFLIPPERS],
                          unsigned mask);
int kn_world_command(struct kn_world *w, int id, const struct kn_command *c);
/* Emergency stop (a watchdog trip, ESTOP): belt targets 0, reached at the
 * robot's belt_decel_emergency (the motor drivers braking) instead of the
 * acceleration ramp; a later non-zero belt command ends the braking. */
int kn_world_brake(struct kn_world *w, int id);
/* Servos off: the flipper motors apply no torque (joints swing freely). */
int kn_world_set_servo_enabled(struct kn_world *w, int id, int on);

/* Advances n steps of pp.step_s (1 ms by default). */
void kn_world_step(struct kn_world *w, int n);
double kn_world_time(const struct kn_world *w);

/* Sensors in the KRP/1 frame and SI units (every KN_HAVE_* bit set). */
int kn_world_state(const struct kn_world *w, int id, struct kn_state *s);
int kn_world_truth(const struct kn_world *w, int id, struct kn_truth *t);
int kn_world_outline(const struct kn_world *w, int id, struct kn_outline *o);

/* Back to time 0: rebuilds the ODE world from the terrain and every robot's
 * spawn pose (ids kept), commands cleared, RNG reseeded. A run after reset
 * replays bit for bit. */
int kn_world_reset(struct kn_world *w);

/* FNV-1a hash over every body's position, orientation and velocities and
 * each robot's belt and battery state: equal hashes = identical states. */
uint64_t kn_world_hash(const struct kn_world *w);

/* Steering efficiency chi of a robot for a friction mode. */
double kn_world_chi(const struct kn_robot_params *rp, enum kn_fdir_mode mode);

/* Belt separation B of a robot file (track centreline distance). */
double kn_world_track_separation(const struct kn_robot_params *rp);

#endif
