/* Scenarios: a JSON file (config/scenarios/) names a robot file, a terrain,
 * a start pose, a controller (timed script or the Kurose flipper sequence)
 * and a pass criterion, optionally as a list of variants (e.g. step heights).
 * kn_scenario_run() simulates one variant, records the trajectory and says
 * whether the criterion held. */
#ifndef KN_ENGINE_SCENARIO_H
#define KN_ENGINE_SCENARIO_H

#include <stdio.h>

#include "assist.h"
#include "params.h"
#include "terrain.h"
#include "trial.h"
#include "world.h"
#include "engine_limits.h"

#define KN_SCRIPT_MAX 32

/* A fleet: robots sharing the scenario's world, each with its own
 * controller program (kenaf-sim-run --scenario ... --robot NAME -- PROGRAM).
 * The list of the file's "robots", or none: then the runner gives each
 * robot a default start (kn_scenario_fleet_start). */
/* as many as one engine world takes */
#define KN_SCENARIO_MAX_ROBOTS KN_ENGINE_MAX_ROBOTS
#define KN_SCENARIO_ROBOT_NAME 32 /* with the NUL */

struct kn_scenario_robot {
    char name[KN_SCENARIO_ROBOT_NAME];
    struct kn_pose start;
    double start_flip[KN_NFLIPPERS];
};

enum kn_expect { KN_EXPECT_PASS, KN_EXPECT_FAIL, KN_EXPECT_EITHER };

struct kn_script_step {
    double t;
    int has_belts, has_twist;
    double belts[2];
    double v, omega;
    unsigned flip_mask;
    double flip[KN_NFLIPPERS];
};

/* EXTERNAL: a controller program drives the robot through kenaf-simd
 * (kenaf-sim-run --scenario); the engine only spawns and judges. */
/* ASSIST: the flipper assist (common/assist.h) on the robot's own
 * readings, the belts at a fixed speed. */
enum kn_ctrl_type { KN_CTRL_SCRIPT, KN_CTRL_KUROSE, KN_CTRL_ASSIST, KN_CTRL_EXTERNAL };

enum kn_crit_type {
    KN_CRIT_CROSS,    /* pass an obstacle: steps, trenches, stairs, pallet, rough ground */
    KN_CRIT_STRAIGHT, /* end near a target point with small yaw */
    KN_CRIT_ROTATE,   /* accumulated yaw and drift */
    KN_CRIT_CIRCLE,   /* circle fit of the path */
    KN_CRIT_RETURN,   /* back to the start pose */
    KN_CRIT_RAMP,     /* progress up a ramp, then hold */
    KN_CRIT_HOLD,     /* no creep after settling (stand on stairs, static slope) */
    KN_CRIT_SETTLE,   /* drop and settle */
    KN_CRIT_TRIAL,    /* repetitions on a test apparatus, scored (trial.h) */
};

struct kn_criterion {
    enum kn_crit_type type;
    /* cross */
    double pass_x, level_z, fall_z, stall_s, max_tilt;
    int on_top; /* all contacts must be on level_z */
    double dir; /* +1: pass beyond pass_x going +x; -1 (descend): below it, going -x */
    /* straight / return */
    double target[2], tol_m, yaw_tol;
    /* rotate */
    double yaw_want, yaw_tol_rot, drift_m;
    /* circle */
    double after_s, rms_m, radius_tol, close_m;
    /* ramp */
    double drive_from, drive_to, distance, progress, stop_at, slip_m;
    /* hold / settle */
    double settle_s, creep_m, pitch_tol, vel_tol, depth_tol;
    /* trial */
    struct kn_trial_def trial;
};

struct kn_scenario {
    char path[512];
    char name[96];
    char title[160]; /* one line for people */
    char group[64];  /* table section */
    char param[32];  /* the swept parameter for the table ("height", ...) */
    double param_value;
    int variant, nvariants;
    int monotone; /* variants ordered so that outcomes must not go fail -> pass */
    struct kn_robot_params rp;
    struct kn_physics_params pp;
    struct kn_terrain terrain;
    /* what the world is made of, as JSON texts (owned): the terrain object
     * with the variant's and the scenario's keys merged (terrain.h,
     * kn_terrain_spec_text) and the robot file with its "robot_changes";
     * the engine tells kenaf-simd of them (KENAF {Cmd World}) */
    char *terrain_spec, *robot_spec;
    struct kn_pose start;
    double start_flip[KN_NFLIPPERS];
    double duration;
    enum kn_ctrl_type ctrl;
    struct kn_script_step script[KN_SCRIPT_MAX];
    int nscript;
    /* Kurose flipper sequence (after Kurose et al., IROS 2008; docs/engine.md) */
    double k_belt, k_approach, k_push, k_rear, k_rear_start;
    double k_rear_pitch; /* also push the rear flippers once the nose is up this much */
    int k_pause;         /* belts stop while the front flippers swing down */
    double k_retract;    /* fold all flippers once the CoG is this far past the edge [m] */
    double k_top_tol;    /* front contact counts when this close to the obstacle top [m] */
    /* "assist": belt speed and the assist's parameters */
    double a_belt;
    struct kn_assist_params assist;
    struct kn_criterion crit;
    /* external controllers: limits held over the whole run (0 = none), and
     * whether the program must end by itself within duration */
    double limit_tilt, limit_torque; /* rad, N*m */
    int must_exit;
    enum kn_expect expect;
    char deviation[256]; /* what the study of a disagreement with the reference found
                          * (printed with the failed row; never makes it pass) */
    char study[512];     /* "study": the file of perturbations --validate runs when this
                          * variant disagrees (path resolved; "" without one) */
    int view_side;       /* plot: 1 side view, 0 top view */
    /* "robots" (external controllers only): 0 without the key */
    struct kn_scenario_robot robots[KN_SCENARIO_MAX_ROBOTS];
    int nrobots;
};

/* One sample of the trajectory (every 10 ms). */
struct kn_sample {
    double t;
    double origin[3], cog[3], rpy[3], yaw_unwrapped;
    double vel[3];
    double belts[2];
    double flip[KN_NFLIPPERS], torque[KN_NFLIPPERS];
    int contacts;
    int wall; /* some robot part touches a KN_TAG_WALL part */
    double zmin, max_depth, battery;
    struct kn_outline outline;
};

/* What decided a verdict, for people and for sweeps counting failures by
 * kind: the verdict file's "mode=". */
enum kn_verdict_mode {
    KN_MODE_NONE,      /* passed */
    KN_MODE_TIP_OVER,  /* tilted past the criterion's max_tilt_deg */
    KN_MODE_STALL,     /* no progress for stall_s */
    KN_MODE_TIME_OUT,  /* undecided at the time limit, or the program still ran (must_exit) */
    KN_MODE_LIMIT,     /* a scenario limit broke: tilt or flipper torque */
    KN_MODE_CRITERION, /* any other failed criterion (off target, fell in, non-finite state) */
    KN_MODE_ERROR,     /* the run could not be judged */
};

struct kn_result {
    int passed; /* the criterion held */
    enum kn_verdict_mode mode;
    char verdict[8]; /* a judged program's verdict ("pass", "fail", "error"); "" in the
                      * engine's own runs, whose plot says what was expected */
    int matches;     /* passed agrees with expect */
    char why[256];   /* what decided it, with numbers */
    double sim_s, cpu_s, rtf;
    double max_depth;        /* over the run [m] */
    double max_tilt;         /* max |roll|, |pitch| [rad] */
    int finite;              /* no NaN/Inf seen */
    unsigned long long hash; /* world hash at the end */
    struct kn_sample *samples;
    int nsamples;
};

/* Number of variants in a scenario file (1 without "variants"); -1 on error. */
int kn_scenario_count(const char *path, char *err, size_t errlen);
/* Loads variant v of a scenario file. */
int kn_scenario_load(const char *path, int v, struct kn_scenario *sc, char *err, size_t errlen);
void kn_scenario_free(struct kn_scenario *sc);

/* One start object (pose, flippers) into pose and flip; ctx names it in
 * errors. */
struct cJSON;
int kn_scenario_parse_start(const struct cJSON *st, const char *ctx, struct kn_pose *pose,
                            double flip[KN_NFLIPPERS], char *err, size_t errlen);
/* The file's "robots" (scenario_robots.c): at most KN_SCENARIO_MAX_ROBOTS,
 * each {"name", "start"}, names unique of [A-Za-z0-9_-], only with an
 * external controller and not with "start". */
int kn_scenario_parse_robots(const struct cJSON *root, const char *path, struct kn_scenario *sc,
                             char *err, size_t errlen);
/* 1 when name is a valid robot name (1..31 of A-Z a-z 0-9 _ -). */
int kn_scenario_robot_name_ok(const char *name);
/* Robot k of n named on the command line: the file's robot of that name
 * (its index), or without "robots" the scenario's start moved 3 m per
 * robot to the left of its heading (-1 when the file declares robots and
 * none is so named). */
int kn_scenario_fleet_start(const struct kn_scenario *sc, const char *name, int k,
                            struct kn_pose *pose, double flip[KN_NFLIPPERS]);

/* One sample of robot id in w now; prev (or NULL) carries the yaw unwrap. */
void kn_scenario_sample(struct kn_world *w, int id, const struct kn_sample *prev,
                        struct kn_sample *s);
/* 1 when every value a criterion reads is finite. */
int kn_sample_finite(const struct kn_sample *s);

/* Runs it; keep_samples = 0 records nothing (faster, no CSV/SVG). A
 * scenario with an external controller is not run here (-1, err set by
 * the loader's caller: kenaf-sim-run --scenario runs those). */
int kn_scenario_run(const struct kn_scenario *sc, int keep_samples, struct kn_result *res);
void kn_result_free(struct kn_result *res);

const char *kn_expect_name(enum kn_expect e);

int kn_result_write_csv(const struct kn_result *res, FILE *f);
int kn_plot_write_svg(const struct kn_scenario *sc, const struct kn_result *res, FILE *f);

/* Criteria (criteria.c). */
struct kn_crit_state;
struct kn_crit_state *kn_crit_begin(const struct kn_scenario *sc);
/* Returns 1 when decided (then *passed and why are set). */
int kn_crit_sample(struct kn_crit_state *cs, const struct kn_sample *s, int *passed, char *why,
                   size_t whylen);
/* At the end of the run: final decision. */
void kn_crit_end(struct kn_crit_state *cs, int *passed, char *why, size_t whylen);
/* What decided the criterion's decision (KN_MODE_NONE before one): the
 * end's decision of a crossing is KN_MODE_TIME_OUT. */
enum kn_verdict_mode kn_crit_mode(const struct kn_crit_state *cs);
/* "none", "tip-over", "stall", "time-out", "limit", "criterion", "error". */
const char *kn_crit_mode_name(enum kn_verdict_mode m);
void kn_crit_free(struct kn_crit_state *cs);
/* The trial a "trial" criterion keeps (its score, its state as it goes);
 * NULL for any other criterion. */
const struct kn_trial *kn_crit_trial(const struct kn_crit_state *cs);
/* The same trial, to report the faults the samples cannot show (an
 * operator's e-stop, a reset); NULL likewise. */
struct kn_trial *kn_crit_trial_rw(struct kn_crit_state *cs);

#endif
