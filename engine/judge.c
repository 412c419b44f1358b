/* Scenario verdicts for external controllers (judge.h). One format with
 * the engine's own scenario runs: the same file, the same samples, the
 * same criteria; only the controller is a program outside the engine. */
#include "judge.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEG (180.0 / M_PI)
#define JUDGE_SAMPLE_S 0.01 /* as the engine's scenario runs */

struct kn_judge {
    struct kn_judge_opts o;
    struct kn_scenario sc;
    struct kn_crit_state *cs;
    struct kn_world *w;
    int robot;
    bool started, over, finished;
    uint64_t every, next, end_step; /* in physics steps */
    struct kn_result res;
    int cap;
    struct kn_sample prev;
    int decided, passed;
    bool time_limit, idle, gone;
    double idle_wall_s;
    double max_tilt, max_torque; /* over the run: rad, N*m */
    double max_tilt_t, max_torque_t;
    char limit_why[200];
};

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
    j->cs = kn_crit_begin(&j->sc);
    j->every = (uint64_t)fmax(1.0, llround(JUDGE_SAMPLE_S / j->sc.pp.step_s));
    j->end_step = (uint64_t)llround(j->sc.duration / j->sc.pp.step_s);
    j->cap = (int)(j->end_step / j->every) + 2;
    j->res.samples = malloc((size_t)j->cap * sizeof *j->res.samples);
    j->res.finite = 1;
    if (!j->cs || !j->res.samples) {
        snprintf(err, errlen, "out of memory");
        kn_judge_free(j);
        return NULL;
    }
    return j;
}

void kn_judge_free(struct kn_judge *j)
{
    if (!j)
        return;
    kn_crit_free(j->cs);
    free(j->res.samples);
    kn_scenario_free(&j->sc);
    free(j);
}

const struct kn_scenario *kn_judge_scenario(const struct kn_judge *j)
{
    return &j->sc;
}

bool kn_judge_started(const struct kn_judge *j)
{
    return j->started;
}

bool kn_judge_over(const struct kn_judge *j)
{
    return j->over;
}

uint64_t kn_judge_next_step(const struct kn_judge *j)
{
    return j->started && !j->over ? j->next : UINT64_MAX;
}

static void take(struct kn_judge *j)
{
    struct kn_sample cur;
    kn_scenario_sample(j->w, j->robot, j->res.nsamples ? &j->prev : NULL, &cur);
    j->prev = cur;
    if (j->res.nsamples < j->cap)
        j->res.samples[j->res.nsamples++] = cur;
    if (!kn_sample_finite(&cur)) {
        j->res.finite = 0;
        j->over = true;
        snprintf(j->limit_why, sizeof j->limit_why, "non-finite state at t=%.2f s", cur.t);
        return;
    }
    if (cur.max_depth > j->res.max_depth)
        j->res.max_depth = cur.max_depth;
    double tilt = fmax(fabs(cur.rpy[0]), fabs(cur.rpy[1]));
    if (tilt > j->max_tilt) {
        j->max_tilt = tilt;
        j->max_tilt_t = cur.t;
    }
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (fabs(cur.torque[k]) > j->max_torque) {
            j->max_torque = fabs(cur.torque[k]);
            j->max_torque_t = cur.t;
        }
    /* a broken limit ends the run: nothing after it can mend it */
    if (!j->limit_why[0] && j->sc.limit_tilt > 0 && tilt > j->sc.limit_tilt) {
        snprintf(j->limit_why, sizeof j->limit_why, "tilted %.1f deg at t=%.2f s (limit %.1f deg)",
                 tilt * DEG, cur.t, j->sc.limit_tilt * DEG);
        j->over = true;
    }
    if (!j->limit_why[0] && j->sc.limit_torque > 0 && j->max_torque > j->sc.limit_torque) {
        snprintf(j->limit_why, sizeof j->limit_why,
                 "flipper torque %.1f N*m at t=%.2f s (limit %.1f N*m)", j->max_torque, cur.t,
                 j->sc.limit_torque);
        j->over = true;
    }
    /* the criterion's first decision stands, as in the engine's own runs */
    if (!j->decided && kn_crit_sample(j->cs, &cur, &j->passed, j->res.why, sizeof j->res.why))
        j->decided = 1;
}

bool kn_judge_start(struct kn_judge *j, struct kn_world *w, int robot, uint64_t steps)
{
    if (j->started)
        return false;
    j->started = true;
    j->w = w;
    j->robot = robot;
    j->end_step += steps;
    j->next = steps + j->every;
    take(j);
    return true;
}

void kn_judge_steps(struct kn_judge *j, uint64_t steps)
{
    while (j->started && !j->over && steps >= j->next) {
        uint64_t at = j->next;
        take(j);
        j->next += j->every;
        if (at >= j->end_step) {
            j->time_limit = true;
            j->over = true;
        }
    }
}

void kn_judge_robot_gone(struct kn_judge *j, int robot)
{
    if (j->started && !j->over && robot == j->robot) {
        j->over = true;
        j->gone = true;
    }
}

void kn_judge_idle(struct kn_judge *j, double wall_s)
{
    j->idle = true;
    j->idle_wall_s = wall_s;
    j->over = true;
}

static int write_file(const char *path, const struct kn_judge *j, int svg)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "kenaf-engine: judge: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = svg ? kn_plot_write_svg(&j->sc, &j->res, f) : kn_result_write_csv(&j->res, f);
    if (fclose(f) != 0 || rc) {
        fprintf(stderr, "kenaf-engine: judge: writing %s failed\n", path);
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

int kn_judge_finish(struct kn_judge *j)
{
    if (j->finished)
        return 0;
    j->finished = true;
    if (j->started && !j->decided)
        kn_crit_end(j->cs, &j->passed, j->res.why, sizeof j->res.why);
    const char *verdict = "pass";
    char why[512];
    if (!j->started) {
        verdict = "error";
        snprintf(why, sizeof why, "no robot was spawned");
    } else if (j->gone && !j->limit_why[0] && !j->decided) {
        verdict = "error";
        snprintf(why, sizeof why, "the robot left the world at t=%.2f s (its connection closed)",
                 j->prev.t);
    } else if (j->idle) {
        verdict = "error";
        snprintf(why, sizeof why,
                 "simulated time stood still at t=%.2f s for %.0f s of wall "
                 "time: the controller never lets time pass (hrt_sleep, hrt_go_forward, "
                 "hrt_turning)",
                 kn_world_time(j->w), j->idle_wall_s);
    } else if (j->limit_why[0]) {
        verdict = "fail";
        snprintf(why, sizeof why, "%s", j->limit_why);
    } else {
        verdict = j->passed ? "pass" : "fail";
        snprintf(why, sizeof why, "%s", j->res.why);
    }
    one_line(why);
    int rc = 0;
    if (j->o.verdict) {
        FILE *f = fopen(j->o.verdict, "w");
        if (!f) {
            fprintf(stderr, "kenaf-engine: judge: cannot write %s: %s\n", j->o.verdict,
                    strerror(errno));
            rc = -1;
        } else {
            char name[sizeof j->sc.name];
            snprintf(name, sizeof name, "%s", j->sc.name);
            one_line(name);
            fprintf(f,
                    "scenario=%s\nvariant=%d\nverdict=%s\nwhy=%s\nsim_s=%.3f\n"
                    "time_limit=%d\nmust_exit=%d\nidle=%d\nsamples=%d\n"
                    "max_tilt_deg=%.2f\nmax_tilt_t=%.2f\nmax_torque_nm=%.2f\n"
                    "max_torque_t=%.2f\nduration_s=%.3f\n",
                    name, j->o.variant, verdict, why, j->started ? kn_world_time(j->w) : 0.0,
                    j->time_limit, j->sc.must_exit, j->idle, j->res.nsamples, j->max_tilt * DEG,
                    j->max_tilt_t, j->max_torque, j->max_torque_t, j->sc.duration);
            if (fclose(f) != 0)
                rc = -1;
        }
    }
    if (j->o.csv && write_file(j->o.csv, j, 0))
        rc = -1;
    if (j->o.svg && j->res.nsamples > 0 && write_file(j->o.svg, j, 1))
        rc = -1;
    return rc;
}
