/* Scenario verdicts for external controllers (judge.h). One format with
 * the engine's own scenario runs: the same file, the same samples, the
 * same criteria; only the controller is a program outside the engine.
 * A fleet is judged robot by robot: each has its own samples, criterion
 * state, limits and verdict; the world's time limit is theirs alike. */
#include "judge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrain_apparatus.h"

#define DEG (180.0 / M_PI)
#define JUDGE_SAMPLE_S 0.01 /* as the engine's scenario runs */

/* One judged robot. */
struct bot {
    char name[KN_SCENARIO_ROBOT_NAME];
    struct kn_pose start;
    double start_flip[KN_NFLIPPERS];
    struct kn_crit_state *cs;
    int robot;
    bool started, over, exited;
    uint64_t next, end_step; /* in physics steps */
    struct kn_result res;
    struct kn_sample prev;
    int decided, passed;
    bool time_limit, gone;
    double max_tilt, max_torque; /* over the run: rad, N*m */
    double max_tilt_t, max_torque_t;
    double end_t;   /* simulated time its judging ended */
    double start_t; /* simulated time it was spawned */
    char limit_why[200];
};

struct kn_judge {
    struct kn_judge_opts o;
    struct kn_scenario sc;
    struct kn_world *w;
    bool finished, fleet, idle;
    uint64_t every; /* in physics steps */
    int cap;
    double idle_wall_s;
    char waiting_for[KN_SCENARIO_MAX_ROBOTS * KN_SCENARIO_ROBOT_NAME];
    int nbots;
    struct bot bots[KN_SCENARIO_MAX_ROBOTS];
};

/* The fleet's names (comma-separated) into bots, each at its start. */
static int add_fleet(struct kn_judge *j, const char *names, char *err, size_t errlen)
{
    const char *p = names;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char name[KN_SCENARIO_ROBOT_NAME + 1];
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, p, n);
        name[n] = '\0';
        if (!kn_scenario_robot_name_ok(name)) {
            snprintf(err, errlen, "robot name \"%s\": 1..%d letters, digits, '_' or '-'", name,
                     KN_SCENARIO_ROBOT_NAME - 1);
            return -1;
        }
        if (j->nbots == KN_SCENARIO_MAX_ROBOTS) {
            snprintf(err, errlen, "more than %d robots", KN_SCENARIO_MAX_ROBOTS);
            return -1;
        }
        if (kn_judge_find(j, name) >= 0) {
            snprintf(err, errlen, "robot %s named twice", name);
            return -1;
        }
        struct bot *b = &j->bots[j->nbots];
        snprintf(b->name, sizeof b->name, "%.31s", name);
        if (kn_scenario_fleet_start(&j->sc, name, j->nbots, &b->start, b->start_flip) < 0) {
            char known[KN_SCENARIO_MAX_ROBOTS * KN_SCENARIO_ROBOT_NAME] = "";
            for (int i = 0; i < j->sc.nrobots; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                         j->sc.robots[i].name);
            snprintf(err, errlen, "%s declares no robot %s (its robots: %s)", j->o.scenario, name,
                     known);
            return -1;
        }
        j->nbots++;
        p += n;
        if (*p == ',')
            p++;
    }
    if (j->nbots == 0) {
        snprintf(err, errlen, "no robot names");
        return -1;
    }
    /* every robot the file declares needs its program: one left standing
     * would block the lockstep world for ever */
    for (int i = 0; i < j->sc.nrobots; i++)
        if (kn_judge_find(j, j->sc.robots[i].name) < 0) {
            snprintf(err, errlen, "%s declares robot %s: give it a program too", j->o.scenario,
                     j->sc.robots[i].name);
            return -1;
        }
    return 0;
}

struct kn_judge *kn_judge_new(const struct kn_judge_opts *o, char *err, size_t errlen)
{
    struct kn_judge *j = calloc(1, sizeof *j);
    if (!j) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    j->o = *o;
    if (kn_scenario_load(o->scenario, o->variant, &j->sc, err, errlen)) {
        free(j);
        return NULL;
    }
    if (j->sc.ctrl != KN_CTRL_EXTERNAL) {
        snprintf(err, errlen,
                 "%s: its controller is not \"external\" (run it with kenaf-engine "
                 "--scenario)",
                 o->scenario);
        kn_judge_free(j);
        return NULL;
    }
    j->fleet = o->robots != NULL;
    if (j->fleet) {
        if (add_fleet(j, o->robots, err, errlen)) {
            kn_judge_free(j);
            return NULL;
        }
    } else if (j->sc.nrobots > 0) {
        snprintf(err, errlen,
                 "%s declares %d robots: give each its program (kenaf-sim-run --scenario "
                 "FILE --robot %s -- PROGRAM ...)",
                 o->scenario, j->sc.nrobots, j->sc.robots[0].name);
        kn_judge_free(j);
        return NULL;
    } else {
        j->nbots = 1;
        j->bots[0].start = j->sc.start;
        memcpy(j->bots[0].start_flip, j->sc.start_flip, sizeof j->sc.start_flip);
    }
    j->every = (uint64_t)fmax(1.0, llround(JUDGE_SAMPLE_S / j->sc.pp.step_s));
    uint64_t end_step = (uint64_t)llround(j->sc.duration / j->sc.pp.step_s);
    j->cap = (int)(end_step / j->every) + 2;
    for (int i = 0; i < j->nbots; i++) {
        struct bot *b = &j->bots[i];
        b->robot = -1;
        b->end_step = end_step;
        b->cs = kn_crit_begin(&j->sc);
        b->res.samples = malloc((size_t)j->cap * sizeof *b->res.samples);
        b->res.finite = 1;
        if (!b->cs || !b->res.samples) {
            snprintf(err, errlen, "out of memory");
            kn_judge_free(j);
            return NULL;
        }
    }
    return j;
}

void kn_judge_free(struct kn_judge *j)
{
    if (!j)
        return;
    for (int i = 0; i < j->nbots; i++) {
        kn_crit_free(j->bots[i].cs);
        free(j->bots[i].res.samples);
    }
    kn_scenario_free(&j->sc);
    free(j);
}

const struct kn_scenario *kn_judge_scenario(const struct kn_judge *j)
{
    return &j->sc;
}

bool kn_judge_is_fleet(const struct kn_judge *j)
{
    return j->fleet;
}

int kn_judge_count(const struct kn_judge *j)
{
    return j->nbots;
}

const char *kn_judge_name(const struct kn_judge *j, int slot)
{
    return j->bots[slot].name;
}

int kn_judge_find(const struct kn_judge *j, const char *name)
{
    for (int i = 0; i < j->nbots; i++)
        if (strcmp(j->bots[i].name, name) == 0)
            return i;
    return -1;
}

bool kn_judge_started(const struct kn_judge *j)
{
    for (int i = 0; i < j->nbots; i++)
        if (j->bots[i].started)
            return true;
    return false;
}

bool kn_judge_all_started(const struct kn_judge *j)
{
    for (int i = 0; i < j->nbots; i++)
        if (!j->bots[i].started)
            return false;
    return true;
}

bool kn_judge_over(const struct kn_judge *j)
{
    for (int i = 0; i < j->nbots; i++)
        if (!j->bots[i].over)
            return false;
    return true;
}

uint64_t kn_judge_next_step(const struct kn_judge *j)
{
    uint64_t next = UINT64_MAX;
    for (int i = 0; i < j->nbots; i++)
        if (j->bots[i].started && !j->bots[i].over && j->bots[i].next < next)
            next = j->bots[i].next;
    return next;
}

int kn_judge_claim(const struct kn_judge *j, const char *name, struct kn_pose *pose,
                   const double **flip)
{
    int slot = j->fleet ? kn_judge_find(j, name) : 0;
    if (slot < 0 || j->bots[slot].started)
        return -1;
    *pose = j->bots[slot].start;
    *flip = j->bots[slot].start_flip;
    return slot;
}

static void take(struct kn_judge *j, struct bot *b)
{
    struct kn_sample cur;
    kn_scenario_sample(j->w, b->robot, b->res.nsamples ? &b->prev : NULL, &cur);
    b->prev = cur;
    b->end_t = cur.t;
    if (b->res.nsamples < j->cap)
        b->res.samples[b->res.nsamples++] = cur;
    if (!kn_sample_finite(&cur)) {
        b->res.finite = 0;
        b->over = true;
        snprintf(b->limit_why, sizeof b->limit_why, "non-finite state at t=%.2f s", cur.t);
        return;
    }
    if (cur.max_depth > b->res.max_depth)
        b->res.max_depth = cur.max_depth;
    double tilt = fmax(fabs(cur.rpy[0]), fabs(cur.rpy[1]));
    if (tilt > b->max_tilt) {
        b->max_tilt = tilt;
        b->max_tilt_t = cur.t;
    }
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (fabs(cur.torque[k]) > b->max_torque) {
            b->max_torque = fabs(cur.torque[k]);
            b->max_torque_t = cur.t;
        }
    /* a broken limit ends the robot's run: nothing after it can mend it */
    if (!b->limit_why[0] && j->sc.limit_tilt > 0 && tilt > j->sc.limit_tilt) {
        snprintf(b->limit_why, sizeof b->limit_why, "tilted %.1f deg at t=%.2f s (limit %.1f deg)",
                 tilt * DEG, cur.t, j->sc.limit_tilt * DEG);
        b->over = true;
    }
    if (!b->limit_why[0] && j->sc.limit_torque > 0 && b->max_torque > j->sc.limit_torque) {
        snprintf(b->limit_why, sizeof b->limit_why,
                 "flipper torque %.1f N*m at t=%.2f s (limit %.1f N*m)", b->max_torque, cur.t,
                 j->sc.limit_torque);
        b->over = true;
    }
    /* the criterion's first decision stands, as in the engine's own runs */
    if (!b->decided && kn_crit_sample(b->cs, &cur, &b->passed, b->res.why, sizeof b->res.why))
        b->decided = 1;
}

void kn_judge_start(struct kn_judge *j, int slot, struct kn_world *w, int robot, uint64_t steps)
{
    struct bot *b = &j->bots[slot];
    j->w = w;
    b->started = true;
    b->robot = robot;
    b->start_t = kn_world_time(w);
    b->end_step += steps;
    b->next = steps + j->every;
    take(j, b);
}

void kn_judge_steps(struct kn_judge *j, uint64_t steps)
{
    bool broken = false;
    for (int i = 0; i < j->nbots; i++) {
        struct bot *b = &j->bots[i];
        while (b->started && !b->over && steps >= b->next) {
            uint64_t at = b->next;
            take(j, b);
            b->next += j->every;
            if (at >= b->end_step) {
                b->time_limit = true;
                b->over = true;
            }
        }
        broken |= !b->res.finite;
    }
    /* a world gone non-finite is over for every robot in it */
    for (int i = 0; broken && i < j->nbots; i++)
        j->bots[i].over = true;
}

void kn_judge_robot_gone(struct kn_judge *j, int robot)
{
    for (int i = 0; i < j->nbots; i++) {
        struct bot *b = &j->bots[i];
        if (b->started && !b->over && b->robot == robot) {
            b->over = true;
            b->gone = true;
        }
    }
}

void kn_judge_exited(struct kn_judge *j, int slot)
{
    struct bot *b = &j->bots[slot];
    b->exited = true;
    b->over = true;
}

void kn_judge_idle(struct kn_judge *j, double wall_s, const char *waiting_for)
{
    j->idle = true;
    j->idle_wall_s = wall_s;
    snprintf(j->waiting_for, sizeof j->waiting_for, "%s", waiting_for);
    for (int i = 0; i < j->nbots; i++)
        j->bots[i].over = true;
}

const struct kn_trial *kn_judge_trial(const struct kn_judge *j, int slot, double *limit_s,
                                      double *left_s, int *end)
{
    if (slot < 0 || slot >= j->nbots || !j->bots[slot].started)
        return NULL;
    const struct bot *b = &j->bots[slot];
    const struct kn_trial *tr = kn_crit_trial(b->cs);
    if (!tr)
        return NULL;
    *limit_s = j->sc.duration;
    *left_s = fmax(0.0, j->sc.duration - (b->end_t - b->start_t));
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    *end = 0;
    if (kn_trial_tipped(tr))
        *end = 2;
    else if (st.done && st.completed >= j->sc.crit.trial.reps)
        *end = 1;
    else if (b->time_limit)
        *end = 3;
    else if (b->over || st.done)
        *end = 4;
    return tr;
}

/* Where repetition `rep` starts: the scenario's start for a figure 8 and
 * a traverse's even repetitions; for its odd ones (finish gate to start
 * gate) that pose mirrored across the middle of the two gates, in the
 * terrain's frame, facing the other way. */
static struct kn_pose rep_start(const struct kn_judge *j, const struct bot *b, int rep)
{
    struct kn_pose p = b->start;
    const struct kn_trial_def *d = &j->sc.crit.trial;
    if (d->course != KN_TRIAL_TRAVERSE || rep % 2 == 0)
        return p;
    const double *tp = j->sc.terrain.pose;
    double c = cos(tp[2]), s = sin(tp[2]);
    double dx = p.x - tp[0], dy = p.y - tp[1];
    double u = c * dx + s * dy, v = -s * dx + c * dy;
    u = d->gate_a + d->gate_b - u;
    p.x = tp[0] + c * u - s * v;
    p.y = tp[1] + s * u + c * v;
    p.yaw = remainder(2 * tp[2] + M_PI - p.yaw, 2 * M_PI);
    p.z = NAN; /* on the ground where it now stands */
    return p;
}

int kn_judge_trial_reset(struct kn_judge *j, int slot, char *why, size_t whylen)
{
    double limit, left;
    int end;
    if (!kn_judge_trial(j, slot, &limit, &left, &end)) {
        snprintf(why, whylen, "no trial under way");
        return -1;
    }
    struct bot *b = &j->bots[slot];
    struct kn_trial *tr = kn_crit_trial_rw(b->cs);
    if (end || b->over) {
        snprintf(why, whylen, "the trial is over");
        return -1;
    }
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    struct kn_pose p = rep_start(j, b, st.rep);
    if (kn_world_place(j->w, b->robot, &p, b->start_flip) != 0) {
        snprintf(why, whylen, "the world cannot place the robot there");
        return -1;
    }
    kn_trial_fault(tr, KN_TRIAL_ASSIST, kn_world_time(j->w));
    kn_trial_restart(tr);
    return 0;
}

int kn_judge_trial_estop(struct kn_judge *j, int slot)
{
    double limit, left;
    int end;
    if (!kn_judge_trial(j, slot, &limit, &left, &end) || end || j->bots[slot].over)
        return -1;
    kn_trial_fault(kn_crit_trial_rw(j->bots[slot].cs), KN_TRIAL_ESTOP, kn_world_time(j->w));
    return 0;
}

/* path with "-NAME" before its suffix (a fleet's robot's file). */
static void robot_path(const struct kn_judge *j, const char *path, const struct bot *b, char *out,
                       size_t n)
{
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (!j->fleet)
        snprintf(out, n, "%s", path);
    else if (!dot || (slash && dot < slash))
        snprintf(out, n, "%s-%s", path, b->name);
    else
        snprintf(out, n, "%.*s-%s%s", (int)(dot - path), path, b->name, dot);
}

static int write_file(const char *path, const struct kn_judge *j, const struct bot *b, int svg)
{
    char fn[1100];
    robot_path(j, path, b, fn, sizeof fn);
    FILE *f = fopen(fn, "w");
    if (!f) {
        fprintf(stderr, "kenaf-engine: judge: cannot write %s: %s\n", fn, strerror(errno));
        return -1;
    }
    int rc = svg ? kn_plot_write_svg(&j->sc, &b->res, f) : kn_result_write_csv(&b->res, f);
    if (fclose(f) != 0 || rc) {
        fprintf(stderr, "kenaf-engine: judge: writing %s failed\n", fn);
        return -1;
    }
    return 0;
}

/* A value for one key=value line: no line breaks. */
static void one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r')
            *s = ' ';
}

/* A line across the lane at x in the terrain's frame, in the world's:
 * where the score's plot draws a gate. */
static void gate_line(FILE *f, const char *key, const struct kn_terrain *t, double x, double half)
{
    double c = cos(t->pose[2]), s = sin(t->pose[2]);
    fprintf(f, "%s=%.4f,%.4f,%.4f,%.4f\n", key, t->pose[0] + c * x + s * half,
            t->pose[1] + s * x - c * half, t->pose[0] + c * x - s * half,
            t->pose[1] + s * x + c * half);
}

/* A trial's score after the verdict's own keys (docs/apparatus.md#trials):
 * what the score tool reads, with the apparatus and its gates. */
static void write_trial(FILE *f, const struct kn_scenario *sc, const struct kn_trial *tr)
{
    char keys[KN_TRIAL_MAX_REPS * 24 + 1024];
    kn_trial_keys(tr, keys, sizeof keys);
    fputs(keys, f);
    const struct kn_terrain *t = &sc->terrain;
    const struct kn_trial_def *d = &sc->crit.trial;
    fprintf(f, "trial_apparatus=%s\n", kn_apparatus_name(t->apparatus));
    gate_line(f, "trial_gate_start", t, d->gate_a, d->lane_half);
    gate_line(f, "trial_gate_finish", t, d->course == KN_TRIAL_FIGURE8 ? d->gate_a : d->gate_b,
              d->lane_half);
}

/* One robot's verdict, why, and what decided it (*mode). The judge knows
 * all but the program's exit status: a program still running at the time
 * limit when the scenario says must_exit fails here, so the verdict file
 * and the plot agree with kenaf-sim-run. */
static const char *decide(struct kn_judge *j, struct bot *b, char *why, size_t n,
                          enum kn_verdict_mode *mode)
{
    *mode = KN_MODE_ERROR;
    if (b->started && !b->decided)
        kn_crit_end(b->cs, &b->passed, b->res.why, sizeof b->res.why);
    if (!b->started) {
        snprintf(why, n, "no robot was spawned%s%s", j->fleet ? " as " : "",
                 j->fleet ? b->name : "");
        return "error";
    }
    if (b->gone && !b->limit_why[0] && !b->decided) {
        snprintf(why, n, "the robot left the world at t=%.2f s (its connection closed)", b->prev.t);
        return "error";
    }
    if (j->idle && !b->exited && !b->time_limit && !b->limit_why[0]) {
        if (j->waiting_for[0])
            snprintf(why, n,
                     "simulated time stood still at t=%.2f s for %.0f s of wall time, waiting "
                     "for the controller of %.300s: it never lets time pass (hrt_sleep, "
                     "hrt_go_forward, hrt_turning)",
                     kn_world_time(j->w), j->idle_wall_s, j->waiting_for);
        else
            snprintf(why, n,
                     "simulated time stood still at t=%.2f s for %.0f s of wall "
                     "time: the controller never lets time pass (hrt_sleep, hrt_go_forward, "
                     "hrt_turning)",
                     kn_world_time(j->w), j->idle_wall_s);
        return "error";
    }
    if (b->limit_why[0]) {
        snprintf(why, n, "%s", b->limit_why);
        *mode = b->res.finite ? KN_MODE_LIMIT : KN_MODE_CRITERION;
        return "fail";
    }
    if (b->time_limit && j->sc.must_exit) {
        snprintf(why, n, "the program did not end within the scenario's %g s (%s: %s)",
                 j->sc.duration, b->passed ? "pass" : "fail", b->res.why);
        *mode = KN_MODE_TIME_OUT;
        return "fail";
    }
    snprintf(why, n, "%s", b->res.why);
    *mode = kn_crit_mode(b->cs);
    /* a crossing left undecided by a program that ended (or a run
     * stopped) before the time limit did not time out */
    if (*mode == KN_MODE_TIME_OUT && !b->time_limit)
        *mode = KN_MODE_CRITERION;
    if (b->passed)
        *mode = KN_MODE_NONE;
    return b->passed ? "pass" : "fail";
}

static int write_verdict(struct kn_judge *j, struct bot *b)
{
    char why[600];
    enum kn_verdict_mode mode;
    const char *verdict = decide(j, b, why, sizeof why, &mode);
    one_line(why);
    /* the plot's title says the verdict, not the criterion alone */
    snprintf(b->res.verdict, sizeof b->res.verdict, "%s", verdict);
    b->res.mode = mode;
    b->res.passed = strcmp(verdict, "pass") == 0;
    int rc = 0;
    if (j->o.verdict) {
        char fn[1100];
        robot_path(j, j->o.verdict, b, fn, sizeof fn);
        FILE *f = fopen(fn, "w");
        if (!f) {
            fprintf(stderr, "kenaf-engine: judge: cannot write %s: %s\n", fn, strerror(errno));
            rc = -1;
        } else {
            char name[sizeof j->sc.name];
            snprintf(name, sizeof name, "%s", j->sc.name);
            one_line(name);
            /* a program that exited: its time is when it ended, not the
             * world's (which went on for the others) */
            double sim = 0;
            if (b->started)
                sim = j->fleet && b->over ? b->end_t : kn_world_time(j->w);
            fprintf(f,
                    "scenario=%s\nvariant=%d\nrobot=%s\nverdict=%s\nmode=%s\nwhy=%s\nsim_s=%.3f\n"
                    "time_limit=%d\nmust_exit=%d\nidle=%d\nsamples=%d\n"
                    "max_tilt_deg=%.2f\nmax_tilt_t=%.2f\nmax_torque_nm=%.2f\n"
                    "max_torque_t=%.2f\nduration_s=%.3f\n",
                    name, j->o.variant, b->name, verdict, kn_crit_mode_name(mode), why, sim,
                    b->time_limit, j->sc.must_exit, j->idle, b->res.nsamples, b->max_tilt * DEG,
                    b->max_tilt_t, b->max_torque, b->max_torque_t, j->sc.duration);
            if (b->started && kn_crit_trial(b->cs))
                write_trial(f, &j->sc, kn_crit_trial(b->cs));
            if (fclose(f) != 0)
                rc = -1;
        }
    }
    if (j->o.csv && write_file(j->o.csv, j, b, 0))
        rc = -1;
    if (j->o.svg && b->res.nsamples > 0 && write_file(j->o.svg, j, b, 1))
        rc = -1;
    return rc;
}

int kn_judge_finish(struct kn_judge *j)
{
    if (j->finished)
        return 0;
    j->finished = true;
    int rc = 0;
    for (int i = 0; i < j->nbots; i++)
        if (write_verdict(j, &j->bots[i]))
            rc = -1;
    return rc;
}
