/* Trials on a test apparatus (docs/apparatus.md#trials), sans-I/O: fed
 * the 100 Hz samples of a run in the terrain's own frame, it counts
 * repetitions (a traverse from gate to gate, alternating direction, or a
 * figure 8 lap), times each, counts the faults (tip-over, a wall
 * touched, the lane left on an open apparatus, and those the operator's
 * side reports: an e-stop, a reset or assist), and scores the trial:
 * repetitions without a fault, with a lower confidence bound on the
 * success probability. No files, no clock: the judge and the engine's
 * runner feed it and write what it says. */
#ifndef KN_ENGINE_TRIAL_H
#define KN_ENGINE_TRIAL_H

#include <stddef.h>

#define KN_TRIAL_MAX_REPS 1000

enum kn_trial_course {
    KN_TRIAL_TRAVERSE, /* start gate to finish gate, then back, alternating */
    KN_TRIAL_FIGURE8,  /* laps round both barriers through the crossing point */
};

enum kn_trial_fault {
    KN_TRIAL_TIP_OVER, /* roll or pitch beyond tip_rad: ends the trial */
    KN_TRIAL_WALL,     /* a robot part touched a KN_TAG_WALL part */
    KN_TRIAL_LANE,     /* the origin left the lane (an apparatus without walls) */
    KN_TRIAL_ESTOP,    /* reported by the operator's side (kn_trial_fault) */
    KN_TRIAL_ASSIST,   /* a reset or assist, reported likewise */
    KN_TRIAL_NFAULTS
};

/* What a trial is: read from a scenario's "criterion" with its terrain's
 * gates (scenario.c); all in the terrain's frame. */
struct kn_trial_def {
    enum kn_trial_course course;
    int reps;              /* repetitions asked for */
    int min_successes;     /* fault-free repetitions that pass the run */
    double gate_a, gate_b; /* traverse: x of the start and finish gates (a < b);
                           * figure 8: gate_a is the crossing line's x */
    double barrier_dx;     /* figure 8: barrier centres at gate_a -/+ this */
    double lane_half;      /* |y| beyond this leaves the lane [m] */
    double lane_dx;        /* figure 8: |x - gate_a| beyond this leaves it too */
    int lane_checked;      /* 1 when the apparatus has no walls */
    double tip_rad;        /* roll or pitch beyond this is a tip-over */
};

/* What the trial knows now: for the judge's verdict and, later, an
 * operator's console showing the trial as it goes. */
struct kn_trial_status {
    int done;           /* the trial has ended (all repetitions, a tip-over, the end) */
    int rep;            /* the repetition under way or next (0-based) */
    int in_rep;         /* 1 while it is under way */
    double rep_elapsed; /* its time so far [s] */
    int rep_faults;     /* its faults so far */
    int completed;      /* repetitions completed */
    int successes;      /* of those, without a fault */
    int faults;         /* all faults */
    int by_kind[KN_TRIAL_NFAULTS];
};

struct kn_trial;

/* NULL when out of memory. */
struct kn_trial *kn_trial_new(const struct kn_trial_def *d);
void kn_trial_free(struct kn_trial *tr);

/* One sample: time [s], the robot origin's x and y, roll and pitch
 * [rad], whether any robot part touches a wall. Returns 1 when the trial
 * has just ended (every repetition done, or a tip-over), else 0. */
int kn_trial_sample(struct kn_trial *tr, double t, double x, double y, double roll, double pitch,
                    int wall);
/* A fault the samples cannot show (KN_TRIAL_ESTOP, KN_TRIAL_ASSIST),
 * at time t; charged to the repetition under way or next. */
void kn_trial_fault(struct kn_trial *tr, enum kn_trial_fault kind, double t);
/* The robot was put back at the start gate (an operator's reset): the
 * repetition under way is no longer under way and starts again when the
 * robot crosses its start line; its faults stay with it. The next sample
 * starts afresh (the jump is no crossing). Charge the reset itself with
 * kn_trial_fault(KN_TRIAL_ASSIST). */
void kn_trial_restart(struct kn_trial *tr);
/* The run ends (time limit, the program ended) at time t: a repetition
 * under way stays unfinished. */
void kn_trial_end(struct kn_trial *tr, double t);

void kn_trial_status(const struct kn_trial *tr, struct kn_trial_status *st);
/* Completed repetition i: its time [s] and faults; -1 when none. */
int kn_trial_rep(const struct kn_trial *tr, int i, double *time_s, int *faults);
/* 1 when the run passes: at least min_successes fault-free repetitions. */
int kn_trial_passed(const struct kn_trial *tr);
/* 1 when a tip-over ended it. */
int kn_trial_tipped(const struct kn_trial *tr);

/* "tip-over", "wall", "lane", "estop", "assist". */
const char *kn_trial_fault_name(enum kn_trial_fault k);
/* The score for people, one line: "7 of 10 repetitions without a fault,
 * 2 wall touches, ...". */
void kn_trial_why(const struct kn_trial *tr, char *why, size_t n);
/* The score as key=value lines (trial_reps=, trial_successes=, ...,
 * each ending in '\n'), for the judge's verdict file; the number of
 * bytes it needed (as snprintf). */
int kn_trial_keys(const struct kn_trial *tr, char *buf, size_t n);

#endif
