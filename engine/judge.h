/* The judge of a scenario run with an external controller (kenaf-sim-run
 * --scenario): kenaf-engine in server mode builds the scenario's world,
 * spawns the first robot at the scenario's start (or, for a fleet, each
 * named robot at its own start: one judged robot per name), samples it
 * every 10 ms
 * of simulated time exactly as the engine's own scenario runs do, feeds
 * the scenario's criterion (criteria.c) and limits, and at the end writes
 * the verdict, the trajectory CSV and its SVG plot. Time is counted in
 * physics steps, so the samples fall on the same steps in every run. */
#ifndef KN_ENGINE_JUDGE_H
#define KN_ENGINE_JUDGE_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario.h"

struct kn_judge_opts {
    const char *scenario; /* scenario file (controller type "external") */
    int variant;          /* its variant, 0 without variants */
    const char *verdict;  /* key=value lines, or NULL */
    const char *csv;      /* trajectory CSV, or NULL */
    const char *svg;      /* plot, or NULL */
    double idle_s;        /* wall seconds without a step after the spawn: the
                           * controller does not let time pass */
    const char *robots;   /* a fleet: the robots' names, comma-separated, or
                           * NULL for the one robot; the outputs then get
                           * "-NAME" before their suffix */
};

struct kn_judge;

/* Loads the scenario; NULL with a reason in err. */
struct kn_judge *kn_judge_new(const struct kn_judge_opts *o, char *err, size_t errlen);
void kn_judge_free(struct kn_judge *j);
const struct kn_scenario *kn_judge_scenario(const struct kn_judge *j);

/* Which judged robot an INIT named `name` is: 0 for the one robot of a
 * run without a fleet, the fleet's robot of that name, -1 when none (or
 * it is already in the world). pose and flip: where it starts. */
int kn_judge_claim(const struct kn_judge *j, const char *name, struct kn_pose *pose,
                   const double **flip);

/* Judged robot `slot` was spawned (robot id in w) at physics step
 * `steps`: its first sample is taken now. */
void kn_judge_start(struct kn_judge *j, int slot, struct kn_world *w, int robot, uint64_t steps);

/* A fleet: its size and names; every robot in the world (all claimed). */
bool kn_judge_is_fleet(const struct kn_judge *j);
int kn_judge_count(const struct kn_judge *j);
const char *kn_judge_name(const struct kn_judge *j, int slot);
int kn_judge_find(const struct kn_judge *j, const char *name);
bool kn_judge_all_started(const struct kn_judge *j);

/* Robot `slot`'s program ended: nothing more is sampled for it; its
 * verdict is made from what was seen. */
void kn_judge_exited(struct kn_judge *j, int slot);

/* The step count of the next sample, UINT64_MAX before the start or at
 * the end: the server does not step past it in one go. */
uint64_t kn_judge_next_step(const struct kn_judge *j);

/* The world has reached `steps`: takes the sample due there. */
void kn_judge_steps(struct kn_judge *j, uint64_t steps);

/* The run is over for the world: the time limit came, the state went
 * non-finite or a limit broke (for a fleet: for every robot). */
bool kn_judge_over(const struct kn_judge *j);
bool kn_judge_started(const struct kn_judge *j);

/* Robot id left the world (its connection closed): nothing more is
 * sampled; the verdict is made from what was seen. */
void kn_judge_robot_gone(struct kn_judge *j, int robot);

/* The controllers let no time pass for wall_s seconds of wall time;
 * waiting_for names the robots the world waited for ("" for the one). */
void kn_judge_idle(struct kn_judge *j, double wall_s, const char *waiting_for);

/* A trial's state as it goes (an operator's console shows it): NULL when
 * robot `slot` runs no trial or has not started; *limit_s the run's time
 * limit, *left_s what is left of it, *end why it ended (enum
 * kn_krp_trial_end's values: 0 not yet, 1 every repetition done, 2 a
 * tip-over, 3 the time limit, 4 the program ended). */
const struct kn_trial *kn_judge_trial(const struct kn_judge *j, int slot, double *limit_s,
                                      double *left_s, int *end);
/* An operator's reset: robot `slot` back at the start pose of the
 * repetition under way or next (a traverse's odd repetitions start at
 * the finish gate, facing back), at rest, flippers at their start angles;
 * the repetition starts again and the trial counts an assist. 0, or -1
 * with a reason (no trial, not started, over, the world refused). */
int kn_judge_trial_reset(struct kn_judge *j, int slot, char *why, size_t whylen);
/* An e-stop engaged on robot `slot` during its trial: a fault. */
int kn_judge_trial_estop(struct kn_judge *j, int slot);

/* Decides and writes the outputs (once); 0 when they were written. */
int kn_judge_finish(struct kn_judge *j);

#endif
