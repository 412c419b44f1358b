/* Trials (engine/trial.c, docs/apparatus.md#trials): the state machine
 * on synthetic sample streams (traverses both ways, a wall touch, a
 * tip-over, the lane left on an open apparatus, the time limit in the
 * middle of a repetition, figure 8 laps and a U-turn that is none), the
 * score's bounds against values computed independently (exact binomial
 * tails in rational arithmetic with python3's fractions), trial files
 * refused with the key named, and the scripted trials run by the engine
 * itself: the same repetitions and bytes twice. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binom.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "scenario.h"
#include "trial.h"

#define DT 0.01
#define DEG (M_PI / 180.0)

/* The shipped stepfield's gates and lane. */
static struct kn_trial_def traverse_def(int reps)
{
    return (struct kn_trial_def){ .course = KN_TRIAL_TRAVERSE,
                                  .reps = reps,
                                  .min_successes = reps,
                                  .gate_a = 1.0,
                                  .gate_b = 3.4,
                                  .lane_half = 0.6,
                                  .tip_rad = 60 * DEG };
}

/* The shipped figure 8: crossing line at 0, barriers at -/+1.8. */
static struct kn_trial_def figure8_def(int reps)
{
    return (struct kn_trial_def){ .course = KN_TRIAL_FIGURE8,
                                  .reps = reps,
                                  .min_successes = reps,
                                  .barrier_dx = 1.8,
                                  .lane_half = 1.8,
                                  .lane_dx = 3.6,
                                  .tip_rad = 60 * DEG };
}

struct drive {
    struct kn_trial *tr;
    double t, x, y;
    int ended; /* the sample at which kn_trial_sample said 1, counted */
};

/* Straight from the current point to (x1, y1) at v m/s, one sample each
 * DT; wall: touching a wall all the way. */
static void go(struct drive *d, double x1, double y1, double v, int wall)
{
    double len = hypot(x1 - d->x, y1 - d->y);
    int n = (int)ceil(len / (v * DT));
    double x0 = d->x, y0 = d->y;
    for (int i = 1; i <= n; i++) {
        d->t += DT;
        d->x = x0 + (x1 - x0) * i / n;
        d->y = y0 + (y1 - y0) * i / n;
        d->ended += kn_trial_sample(d->tr, d->t, d->x, d->y, 0, 0, wall);
    }
}

static void start(struct drive *d, struct kn_trial *tr, double x, double y)
{
    *d = (struct drive){ .tr = tr, .x = x, .y = y };
    kn_trial_sample(tr, 0, x, y, 0, 0, 0);
}

START_TEST(traverse_both_ways)
{
    struct kn_trial_def def = traverse_def(2);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 4.0, 0, 0.5, 0); /* 2.4 m between the gates at 0.5 m/s: 4.8 s */
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 1);
    ck_assert_int_eq(st.in_rep, 0);
    /* the next repetition goes back: driving on does not start it */
    go(&d, 4.5, 0, 0.5, 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 0);
    go(&d, 0.0, 0, 0.4, 0); /* back at 0.4 m/s: 6 s */
    ck_assert_int_eq(d.ended, 1);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.done, 1);
    ck_assert_int_eq(st.completed, 2);
    ck_assert_int_eq(st.successes, 2);
    ck_assert_int_eq(st.faults, 0);
    double t0, t1;
    int f0, f1;
    ck_assert_int_eq(kn_trial_rep(tr, 0, &t0, &f0), 0);
    ck_assert_int_eq(kn_trial_rep(tr, 1, &t1, &f1), 0);
    ck_assert_int_eq(kn_trial_rep(tr, 2, &t1, &f1), -1);
    ck_assert_msg(fabs(t0 - 4.8) < 1e-6 && fabs(t1 - 6.0) < 1e-6, "times %.6f %.6f", t0, t1);
    ck_assert_int_eq(kn_trial_passed(tr), 1);
    /* after the last repetition nothing more counts */
    ck_assert_int_eq(kn_trial_sample(tr, d.t + 1, 0, 0, M_PI / 2, 0, 1), 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.faults, 0);
    char keys[1024];
    kn_trial_keys(tr, keys, sizeof keys);
    ck_assert_ptr_nonnull(strstr(keys, "trial_reps=2\ntrial_successes=2\ntrial_faults=0\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_rep_times=4.800,6.000\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_ended=all\n"));
    /* 2 of 2 at 80 %: 0.2^(1/2) */
    ck_assert_ptr_nonnull(strstr(keys, "trial_lower_bound_80=0.4472\n"));
    kn_trial_free(tr);
}
END_TEST

/* Backing out over the start line: the repetition has not happened; it
 * starts again, timed from the new crossing. */
START_TEST(traverse_backs_out)
{
    struct kn_trial_def def = traverse_def(1);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 1.5, 0, 0.5, 0);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 1);
    ck_assert_msg(fabs(st.rep_elapsed - 1.0) < 1e-6, "elapsed %.6f", st.rep_elapsed);
    go(&d, 0.5, 0, 0.5, 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 0);
    go(&d, 3.5, 0, 1.0, 0);
    double t;
    int f;
    ck_assert_int_eq(kn_trial_rep(tr, 0, &t, &f), 0);
    ck_assert_msg(fabs(t - 2.4) < 1e-6, "time %.6f", t);
    kn_trial_free(tr);
}
END_TEST

/* An operator's reset mid-repetition: an assist charged to it, the
 * repetition no longer under way; the jump back to the start is no
 * crossing; the next crossing starts it again, timed from there, and it
 * completes with its fault. */
START_TEST(restart_after_reset)
{
    struct kn_trial_def def = traverse_def(1);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 2.0, 0, 0.5, 0);
    kn_trial_fault(tr, KN_TRIAL_ASSIST, d.t);
    kn_trial_restart(tr);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 0);
    ck_assert_int_eq(st.rep_faults, 1);
    ck_assert_int_eq(st.by_kind[KN_TRIAL_ASSIST], 1);
    d.x = 0; /* teleported: the next sample is the first of a new path */
    d.t += DT;
    kn_trial_sample(tr, d.t, d.x, 0, 0, 0, 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 0);
    go(&d, 3.5, 0, 1.0, 0);
    ck_assert_int_eq(d.ended, 1);
    double t;
    int f;
    ck_assert_int_eq(kn_trial_rep(tr, 0, &t, &f), 0);
    ck_assert_msg(fabs(t - 2.4) < 1e-6, "time %.6f", t);
    ck_assert_int_eq(f, 1);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.successes, 0);
    kn_trial_free(tr);
}
END_TEST

START_TEST(wall_touches)
{
    struct kn_trial_def def = traverse_def(2);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 2.0, 0, 0.5, 0);
    go(&d, 2.2, 0, 0.5, 1); /* one touch of 40 samples: one fault */
    go(&d, 2.4, 0, 0.5, 0);
    go(&d, 2.5, 0, 0.5, 1); /* another */
    go(&d, 3.3, 0, 0.5, 0);
    go(&d, 3.6, 0, 0.5, 1); /* a third, still touching as repetition 2 waits */
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 1);
    ck_assert_int_eq(st.by_kind[KN_TRIAL_WALL], 4); /* charged once more to the next */
    ck_assert_int_eq(st.rep_faults, 1);
    go(&d, 3.0, 0, 0.5, 1); /* the same touch on into repetition 2: no more */
    go(&d, 0.5, 0, 0.5, 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.done, 1);
    ck_assert_int_eq(st.successes, 0);
    ck_assert_int_eq(st.by_kind[KN_TRIAL_WALL], 4);
    double t;
    int f;
    kn_trial_rep(tr, 0, &t, &f);
    ck_assert_int_eq(f, 3);
    kn_trial_rep(tr, 1, &t, &f);
    ck_assert_int_eq(f, 1);
    ck_assert_int_eq(kn_trial_passed(tr), 0);
    char why[256];
    kn_trial_why(tr, why, sizeof why);
    ck_assert_msg(strstr(why, "0 of 2 repetitions without a fault") &&
                      strstr(why, "4 wall touches"),
                  "%s", why);
    kn_trial_free(tr);
}
END_TEST

START_TEST(tip_over_ends)
{
    struct kn_trial_def def = traverse_def(4);
    def.min_successes = 1;
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 3.5, 0, 0.5, 0);
    go(&d, 2.0, 0, 0.5, 0);
    ck_assert_int_eq(kn_trial_sample(tr, d.t + DT, 2.0, 0, 0, 59 * DEG, 0), 0);
    ck_assert_int_eq(kn_trial_sample(tr, d.t + 2 * DT, 2.0, 0, -61 * DEG, 0, 0), 1);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.done, 1);
    ck_assert_int_eq(st.by_kind[KN_TRIAL_TIP_OVER], 1);
    ck_assert_int_eq(kn_trial_tipped(tr), 1);
    ck_assert_int_eq(st.completed, 1);
    /* one of four fault-free: passes min_successes 1 all the same */
    ck_assert_int_eq(kn_trial_passed(tr), 1);
    ck_assert_int_eq(kn_trial_sample(tr, d.t + 3 * DT, 1.0, 0, 0, 0, 0), 0);
    char keys[1024];
    kn_trial_keys(tr, keys, sizeof keys);
    ck_assert_ptr_nonnull(strstr(keys, "trial_faults_tip_over=1\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_ended=tip-over\n"));
    kn_trial_free(tr);
}
END_TEST

START_TEST(lane_open_apparatus)
{
    for (int open = 0; open <= 1; open++) {
        struct kn_trial_def def = traverse_def(1);
        def.lane_checked = open;
        struct kn_trial *tr = kn_trial_new(&def);
        struct drive d;
        start(&d, tr, 0, 0);
        go(&d, 2.0, 0.7, 0.5, 0); /* out of the 0.6 m half lane */
        go(&d, 2.5, 0.0, 0.5, 0);
        go(&d, 3.0, -0.65, 0.5, 0); /* out again, the other side */
        go(&d, 3.5, 0.0, 0.5, 0);
        struct kn_trial_status st;
        kn_trial_status(tr, &st);
        ck_assert_int_eq(st.completed, 1);
        ck_assert_int_eq(st.by_kind[KN_TRIAL_LANE], open ? 2 : 0);
        ck_assert_int_eq(st.successes, open ? 0 : 1);
        kn_trial_free(tr);
    }
}
END_TEST

START_TEST(time_limit_mid_rep)
{
    struct kn_trial_def def = traverse_def(3);
    def.min_successes = 2;
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 0, 0);
    go(&d, 3.5, 0, 0.5, 0);
    go(&d, 2.0, 0, 0.5, 0); /* repetition 2, 1.4 m in: 2.8 s */
    kn_trial_fault(tr, KN_TRIAL_ESTOP, d.t);
    kn_trial_end(tr, d.t);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.done, 1);
    ck_assert_int_eq(st.in_rep, 1);
    ck_assert_int_eq(st.completed, 1);
    ck_assert_int_eq(st.by_kind[KN_TRIAL_ESTOP], 1);
    ck_assert_int_eq(kn_trial_passed(tr), 0);
    char keys[1024], why[256];
    kn_trial_keys(tr, keys, sizeof keys);
    ck_assert_ptr_nonnull(strstr(keys, "trial_reps=1\ntrial_successes=1\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_unfinished=1\ntrial_unfinished_s=2.800\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_faults_estop=1\n"));
    ck_assert_ptr_nonnull(strstr(keys, "trial_ended=end\n"));
    kn_trial_why(tr, why, sizeof why);
    ck_assert_msg(strstr(why, "1 of 3 repetitions without a fault (needs 2), 1 completed") &&
                      strstr(why, "1 e-stop") && strstr(why, "repetition 2 unfinished"),
                  "%s", why);
    /* nothing after the end */
    ck_assert_int_eq(kn_trial_sample(tr, d.t + 1, 3.5, 0, 0, 0, 1), 0);
    kn_trial_free(tr);
}
END_TEST

/* A figure 8 on x = 3 sin(a), y = 1.2 sin(2a): through the crossing at
 * a = 0, pi, 2 pi; behind the right barrier at a = pi/2, the left at
 * 3 pi/2. */
static void lemniscate(struct drive *d, double a0, double a1, double w)
{
    int n = (int)ceil((a1 - a0) / (w * DT));
    for (int i = 1; i <= n; i++) {
        double a = a0 + (a1 - a0) * i / n;
        d->t += DT;
        d->x = 3 * sin(a);
        d->y = 1.2 * sin(2 * a);
        d->ended += kn_trial_sample(d->tr, d->t, d->x, d->y, 0, 0, 0);
    }
}

START_TEST(figure8_laps)
{
    struct kn_trial_def def = figure8_def(2);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, 3 * sin(-0.1), 1.2 * sin(-0.2));
    lemniscate(&d, -0.1, M_PI + 0.1, 0.25); /* the first half: no lap yet */
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.in_rep, 1);
    ck_assert_int_eq(st.completed, 0);
    lemniscate(&d, M_PI + 0.1, 4 * M_PI + 0.1, 0.25);
    ck_assert_int_eq(d.ended, 1);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 2);
    ck_assert_int_eq(st.successes, 2);
    double t;
    int f;
    for (int i = 0; i < 2; i++) {
        kn_trial_rep(tr, i, &t, &f);
        /* 2 pi at 0.25 rad/s, to the sample */
        ck_assert_msg(fabs(t - 2 * M_PI / 0.25) < 0.02, "lap %d: %.4f s", i, t);
    }
    kn_trial_free(tr);
}
END_TEST

START_TEST(figure8_u_turn)
{
    struct kn_trial_def def = figure8_def(1);
    struct kn_trial *tr = kn_trial_new(&def);
    struct drive d;
    start(&d, tr, -0.3, 0.9);
    /* up the right barrier's upper lane, past its centre and its far
     * face, turned round short of its back, and back through the
     * crossing: a U-turn, no lap */
    go(&d, 2.7, 0.9, 0.5, 0);
    go(&d, 2.9, 0.6, 0.5, 0);
    go(&d, 2.7, 0.9, 0.5, 0);
    go(&d, -0.5, 0.9, 0.5, 0);
    struct kn_trial_status st;
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 0);
    /* round the left barrier and back through the crossing: the right
     * was never rounded, still no lap */
    go(&d, -3.0, 0.9, 0.5, 0);
    go(&d, -3.0, -0.9, 0.5, 0);
    go(&d, 0.5, -0.9, 0.5, 0);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 0);
    /* round the right barrier's back now, and through the crossing: the
     * lap that started at the first pass ends */
    go(&d, 3.0, -0.9, 0.5, 0);
    go(&d, 3.0, 0.9, 0.5, 0);
    go(&d, -0.5, 0.9, 0.5, 0);
    ck_assert_int_eq(d.ended, 1);
    kn_trial_status(tr, &st);
    ck_assert_int_eq(st.completed, 1);
    kn_trial_free(tr);
}
END_TEST

/* Exact one-sided lower bounds at 80 %: python3, fractions, bisection of
 * sum(comb(n, i) p^i (1-p)^(n-i), i >= k) = 1/5 to 60 halvings. */
START_TEST(bounds_known)
{
    static const struct {
        unsigned k, n;
        double lo;
    } v[] = { { 9, 10, 0.7290118496 },
              { 7, 10, 0.5163427626 },
              { 8, 10, 0.6190625483 },
              { 1, 4, 0.0542583910 },
              { 2, 2, 0.4472135955 } };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        double lo = kn_binom_lower(v[i].k, v[i].n, 0.8);
        ck_assert_msg(fabs(lo - v[i].lo) < 1e-9, "%u/%u: %.10f, want %.10f", v[i].k, v[i].n, lo,
                      v[i].lo);
    }
    /* 10 of 10: 80 % reliability shown at 80 % confidence; 9 of 10 not */
    ck_assert(kn_binom_lower(10, 10, 0.8) >= 0.8);
    ck_assert(kn_binom_lower(9, 10, 0.8) < 0.8);
    ck_assert(kn_binom_lower(0, 10, 0.8) == 0);
    ck_assert(kn_binom_lower(0, 0, 0.8) == 0);
}
END_TEST

/* A scenario file in a scratch directory, the terrain and robot by
 * absolute path. */
static char scratch[64];
static void write_trial(const char *name, const char *terrain, const char *criterion)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", scratch, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "{\"name\": \"t\", \"robot\": \"%s/robots/kenaf.json\",\n"
            " \"terrain\": {\"file\": \"%s/terrains/%s\"},\n"
            " \"duration_s\": 10, \"controller\": {\"type\": \"external\"},\n"
            " \"criterion\": %s}\n",
            KN_TEST_CONFIG_DIR, KN_TEST_CONFIG_DIR, terrain, criterion);
    fclose(f);
}

static void refused(const char *terrain, const char *criterion, const char *want)
{
    write_trial("bad.json", terrain, criterion);
    char path[256], err[1024] = "";
    snprintf(path, sizeof path, "%s/bad.json", scratch);
    struct kn_scenario *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    int rc = kn_scenario_load(path, 0, sc, err, sizeof err);
    if (rc == 0)
        kn_scenario_free(sc);
    free(sc);
    ck_assert_msg(rc != 0 && strstr(err, want), "%s: %s (want \"%s\")", criterion, err, want);
}

START_TEST(files_refused)
{
    snprintf(scratch, sizeof scratch, "/tmp/kn-trial-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(scratch));
    const char *sf = "apparatus/stepfield-e2828.json";
    refused(sf, "{\"type\": \"trial\", \"course\": \"traverse\"}", "\"repetitions\"");
    refused(sf, "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 10, \"laps\": 3}",
            "\"laps\"");
    refused(sf, "{\"type\": \"trial\", \"course\": \"sideways\", \"repetitions\": 10}",
            "\"course\"");
    refused(sf, "{\"type\": \"trial\", \"repetitions\": 10}", "\"course\"");
    refused(sf, "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 2.5}",
            "\"repetitions\"");
    refused(sf, "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 0}",
            "\"repetitions\"");
    refused(sf,
            "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3, "
            "\"min_successes\": 4}",
            "\"min_successes\"");
    refused(sf,
            "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3, "
            "\"tip_over_deg\": 0}",
            "\"tip_over_deg\"");
    refused(sf,
            "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3, "
            "\"lane_half_width_m\": \"wide\"}",
            "\"lane_half_width_m\"");
    refused(sf, "{\"type\": \"trial\", \"course\": \"figure8\", \"repetitions\": 3}", "\"course\"");
    refused("flat.json", "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3}",
            "\"course\"");
    refused("apparatus/figure8-e2829.json",
            "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3}", "\"course\"");
    /* and a good one loads, the lane checked only without walls */
    char path[256], err[1024] = "";
    snprintf(path, sizeof path, "%s/good.json", scratch);
    struct kn_scenario *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    write_trial("good.json", "apparatus/hurdles-e2802.json",
                "{\"type\": \"trial\", \"course\": \"traverse\", \"repetitions\": 3, "
                "\"comment\": \"c\"}");
    ck_assert_msg(kn_scenario_load(path, 0, sc, err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(sc->crit.trial.reps, 3);
    ck_assert_int_eq(sc->crit.trial.min_successes, 3);
    ck_assert_int_eq(sc->crit.trial.lane_checked, 0);
    ck_assert(fabs(sc->crit.trial.tip_rad - 60 * DEG) < 1e-12);
    kn_scenario_free(sc);
    unlink(path);
    snprintf(path, sizeof path, "%s/bad.json", scratch);
    unlink(path);
    free(sc);
    rmdir(scratch);
}
END_TEST

/* kn_scenario_run of a scripted trial file, its CSV in memory. */
static void run_trial(const char *file, char **csv, size_t *len, char *why, size_t n)
{
    char path[1024], err[1024] = "";
    snprintf(path, sizeof path, "%s/scenarios/trials/%s", KN_TEST_CONFIG_DIR, file);
    struct kn_scenario *sc = malloc(sizeof *sc);
    ck_assert_ptr_nonnull(sc);
    ck_assert_msg(kn_scenario_load(path, 0, sc, err, sizeof err) == 0, "%s", err);
    struct kn_result res;
    ck_assert_int_eq(kn_scenario_run(sc, 1, &res), 0);
    FILE *f = open_memstream(csv, len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(kn_result_write_csv(&res, f), 0);
    fclose(f);
    snprintf(why, n, "%s", res.why);
    ck_assert_msg(res.passed, "%s: %s", file, res.why);
    kn_result_free(&res);
    kn_scenario_free(sc);
    free(sc);
}

static void scripted_twice(const char *file, const char *score)
{
    char *a = NULL, *b = NULL, wa[256], wb[256];
    size_t la = 0, lb = 0;
    run_trial(file, &a, &la, wa, sizeof wa);
    run_trial(file, &b, &lb, wb, sizeof wb);
    ck_assert_msg(strstr(wa, score), "%s: %s (want %s)", file, wa, score);
    ck_assert_str_eq(wa, wb);
    ck_assert_msg(la == lb && la > 0 && memcmp(a, b, la) == 0, "%s: the CSVs differ", file);
    free(a);
    free(b);
}

START_TEST(scripted_stepfield)
{
    scripted_twice("stepfield-e2828-script.json", "4 of 4 repetitions without a fault");
}
END_TEST

START_TEST(scripted_figure8)
{
    scripted_twice("figure8-e2829-script.json", "2 of 2 repetitions without a fault");
}
END_TEST

/* One case per test, so the unit suite takes the state machine alone
 * (CK_RUN_CASE=state) and the engine suite each scripted run. */
static TCase *tcase(Suite *s, const char *name, int timeout_s)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, timeout_s);
    suite_add_tcase(s, tc);
    return tc;
}

int main(void)
{
    Suite *s = suite_create("engine-trial");
    TCase *tc = tcase(s, "state", 30);
    tcase_add_test(tc, traverse_both_ways);
    tcase_add_test(tc, traverse_backs_out);
    tcase_add_test(tc, restart_after_reset);
    tcase_add_test(tc, wall_touches);
    tcase_add_test(tc, tip_over_ends);
    tcase_add_test(tc, lane_open_apparatus);
    tcase_add_test(tc, time_limit_mid_rep);
    tcase_add_test(tc, figure8_laps);
    tcase_add_test(tc, figure8_u_turn);
    tcase_add_test(tc, bounds_known);
    tcase_add_test(tc, files_refused);
    tcase_add_test(tcase(s, "run-stepfield", 120), scripted_stepfield);
    tcase_add_test(tcase(s, "run-figure8", 120), scripted_figure8);
    return h_run_suite(s);
}
