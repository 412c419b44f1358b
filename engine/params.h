/* Parameter sets of the built-in engine: the robot (read from a robot file,
 * config/robots/kenaf.json) and the physics (world) settings. Plain data,
 * SI units, lengths in metres, angles in radians. */
#ifndef KN_ENGINE_PARAMS_H
#define KN_ENGINE_PARAMS_H

#include <stddef.h>

/* How the first friction direction of a track contact is chosen. */
enum kn_fdir_mode {
    KN_FDIR_AXLE = 0, /* t1 = axle x normal (Choreonoid, default) */
    KN_FDIR_ICR = 1,  /* t1 tangent to the circle about the ICR (Pecka / Gazebo) */
};

struct kn_robot_params {
    char name[32];
    /* masses and inertia */
    double base_mass;    /* base incl. main tracks [kg] */
    double base_box[3];  /* box whose uniform inertia stands for the base [m] */
    double cog_z;        /* base CoG below (negative) the geometric centre [m] */
    double cog_x;        /* base CoG ahead of (+) / behind (-) it; optional, 0 [m] */
    double flipper_mass; /* each [kg] */
    /* main tracks (side view: stadium of two equal pulleys) */
    double track_pulley_x; /* pulley centres at x = +-track_pulley_x [m] */
    double track_radius;   /* pulley radius [m] */
    double track_width;    /* belt width [m] */
    double track_y;        /* belt centreline at y = +-track_y [m] */
    /* flippers: tapered stadium, root on the main pulley axis */
    double flipper_root_radius;
    double flipper_tip_radius;
    double flipper_length; /* pulley centre distance root..tip [m] */
    double flipper_width;
    double flipper_y;     /* centreline at y = +-flipper_y [m] */
    double flipper_limit; /* joint range +-limit [rad] */
    /* flipper servo (ODE hinge motor: dParamVel + dParamFMax) */
    double servo_kp;         /* [1/s] */
    double servo_rate_max;   /* [rad/s] */
    double servo_torque_max; /* [N m] */
    /* chassis box between the tracks */
    double chassis_size[3];   /* x, y, z [m] */
    double chassis_clearance; /* chassis bottom above track bottom [m] */
    /* belts */
    double belt_speed_max;       /* [m/s] */
    double belt_accel_max;       /* belt motor acceleration limit [m/s^2] */
    double belt_decel_emergency; /* braking on an emergency stop [m/s^2] */
    double steer_chi;            /* steering efficiency for (v, omega) <-> belts, axle mode */
    double steer_chi_icr;        /* the same in ICR mode (it also places the ICR) */
    /* friction */
    double track_mu;  /* along the belt (mu1) */
    double track_mu2; /* across the belt */
    double body_mu;   /* chassis, and track contacts without a belt direction */
    /* battery */
    double batt_full_v;
    double batt_empty_v;
    double batt_capacity_ah;
    double batt_r_ohm;
    double batt_idle_a;
    double batt_belt_a_per_mps; /* per side, per m/s of belt speed */
    double batt_flipper_a_per_nm;
};

/* Upper bound of belt_points and flipper_points. */
#define KN_BELT_POINTS_MAX 9

struct kn_physics_params {
    double step_s;  /* 0.001 */
    int iterations; /* QuickStep sweeps */
    double sor;     /* QuickStep over-relaxation */
    double erp;
    double cfm;
    double surface_layer;      /* contact slop [m] */
    double max_correcting_vel; /* [m/s] */
    int contacts_per_pair;     /* cap on contacts per geom pair */
    enum kn_fdir_mode fdir_mode;
    unsigned long seed;    /* ODE global RNG seed, set before each build */
    double gravity;        /* [m/s^2], positive */
    int flipper_collision; /* 0: flipper geoms do not collide (no-flipper tests) */
    int belt_points;       /* ground contact points along each main track, ends
                                 * included (2: only the pulley ends, the old model) */
    int flipper_points;    /* the same along each flipper */
};

/* The defaults: 1 ms steps, ERP 0.2, SOR 1.3 and a 1 mm surface layer as in
 * ODE's and Gazebo's own defaults, 10 sweeps (stairs scenarios ask for 20), 4 contacts per geom pair;
 * 3 contact points along each main track and each flipper (its ends
 * and middle);
 * docs/engine.md says why. */
void kn_physics_defaults(struct kn_physics_params *p);

/* Reads a robot file. Every field is required and range-checked; on error
 * returns -1 and writes "FILE: what" into err. */
int kn_robotfile_load(const char *path, struct kn_robot_params *rp, char *err, size_t errlen);

/* Same, from a JSON text already in memory (name is used in messages). */
int kn_robotfile_parse(const char *text, const char *name, struct kn_robot_params *rp, char *err,
                       size_t errlen);

/* Reads the optional "physics" object of a scenario (or any JSON object):
 * only the keys present override p. Returns -1 with err on a bad value. */
struct cJSON;
int kn_physics_from_json(const struct cJSON *obj, struct kn_physics_params *p, char *err,
                         size_t errlen);

#endif
