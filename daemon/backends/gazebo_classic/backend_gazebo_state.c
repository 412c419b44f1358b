/* The gazebo backend's feedback: Gazebo's world statistics, model poses
 * and track speeds into the neutral state (backend_gazebo.h). Gazebo
 * Classic reports no rates, accelerations, joint angles or belt travel for
 * a tracked model, so they are derived here:
 * - time: the sim time of ~/pose/info and ~/world_stats, the newest seen;
 * - attitude and position: the model's pose; rates from successive
 *   attitudes, acceleration from three successive positions (convert.h);
 * - flipper angles: each flipper link's orientation relative to the model;
 * - belt speeds: ~/tracks_speed, the speeds the plugin applies (commanded,
 *   after its clamps: slip is not visible), and belt travel is their
 *   integral over sim time (it stops while the world is paused).
 * Pure: no I/O, no clock; time comes only from the messages. */
#include "backend_gazebo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double ns_to_s(int64_t ns)
{
    return kn_conv_us_to_s(ns > 0 ? (uint64_t)(ns / 1000) : 0);
}

int kn_gazebo_scoped_joint(char *out, size_t cap, const char *model, const char *joint)
{
    int w = strstr(joint, "::") ? snprintf(out, cap, "%s", joint)
                                : snprintf(out, cap, "%s::%s", model, joint);
    return w < 0 || (size_t)w >= cap ? -1 : 0;
}

static bool ends_with(const char *s, const char *suffix, size_t *stem)
{
    size_t n = strlen(s), k = strlen(suffix);
    if (n <= k || strcmp(s + n - k, suffix) != 0)
        return false;
    *stem = n - k;
    return true;
}

void kn_gazebo_fb_init(struct kn_gazebo_fb *f, const struct kn_conv_table *t, const char *model,
                       const char *const joints[KN_NFLIPPERS],
                       const char *const links[KN_NFLIPPERS])
{
    static const char *const suffixes[] = { "_joint", "_jnt", "_j", "Joint", "_hinge" };
    memset(f, 0, sizeof *f);
    f->conv = *t;
    snprintf(f->model, sizeof f->model, "%s", model);
    size_t ml = strlen(f->model);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const char *lk = links ? links[k] : NULL;
        if (lk && lk[0]) {
            /* named in the config: that link only */
            if (strstr(lk, "::"))
                snprintf(f->flipper_link[k][0], sizeof f->flipper_link[k][0], "%s", lk);
            else
                snprintf(f->flipper_link[k][0], sizeof f->flipper_link[k][0], "%s::%s", f->model,
                         lk);
            memcpy(f->flipper_link[k][1], f->flipper_link[k][0], sizeof f->flipper_link[k][1]);
            continue;
        }
        const char *j = joints[k];
        if (strncmp(j, f->model, ml) == 0 && strncmp(j + ml, "::", 2) == 0)
            j += ml + 2;
        size_t stem = strlen(j);
        for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
            if (ends_with(j, suffixes[i], &stem))
                break;
        snprintf(f->flipper_link[k][0], sizeof f->flipper_link[k][0], "%s::%.*s", f->model,
                 (int)stem, j);
        snprintf(f->flipper_link[k][1], sizeof f->flipper_link[k][1], "%s::%s", f->model, j);
    }
}

static void drop_history(struct kn_gazebo_fb *f)
{
    f->npos = 0;
    f->have_rpy = false;
}

void kn_gazebo_fb_restart(struct kn_gazebo_fb *f)
{
    drop_history(f);
    f->have_time = false;
    f->have_stats = false;
    f->model_seen = false;
    f->other_model[0] = '\0';
    f->st.have &= ~(KN_HAVE_RATE | KN_HAVE_ACCEL);
}

static void advance_belts(struct kn_gazebo_fb *f, int64_t t)
{
    if (t <= f->belt_t_ns)
        return;
    double dt = ns_to_s(t - f->belt_t_ns);
    for (int i = 0; i < 2; i++)
        f->st.belt_pos_m[i] += f->belt_speed[i] * dt;
    f->belt_t_ns = t;
}

/* Sim time stepped back: the world was reset (or restarted). Belt travel
 * stays; everything derived from time starts over. */
static void reset_event(struct kn_gazebo_fb *f, int64_t t)
{
    f->resets++;
    drop_history(f);
    f->t_ns = t;
    f->belt_t_ns = t;
    f->pose_t_ns = t;
}

static void set_time(struct kn_gazebo_fb *f, int64_t t)
{
    if (!f->have_time) {
        f->have_time = true;
        f->t_ns = t;
        f->belt_t_ns = t;
        f->pose_t_ns = t;
    } else if (t < f->t_ns - KN_GAZEBO_FB_RESET_NS) {
        reset_event(f, t);
    } else if (t > f->t_ns) {
        f->t_ns = t;
    }
    advance_belts(f, f->t_ns);
    f->st.time_s = ns_to_s(f->t_ns);
    f->st.have |= KN_HAVE_TIME | KN_HAVE_BELT_POS | KN_HAVE_BELT_SPEED;
}

static void at_rest(struct kn_gazebo_fb *f)
{
    double p[3], acc[3];
    memcpy(p, f->st.pos_m, sizeof p);
    memset(f->st.rate_rad_s, 0, sizeof f->st.rate_rad_s);
    if (kn_conv_accel_from_positions(p, p, p, 1.0, 1.0, f->st.rpy_rad, acc) == 0)
        memcpy(f->st.accel_m_s2, acc, sizeof acc);
    f->st.have |= KN_HAVE_RATE | KN_HAVE_ACCEL;
}

bool kn_gazebo_fb_world_stats(struct kn_gazebo_fb *f, const Gazebo__Msgs__WorldStatistics *m)
{
    f->stats_msgs++;
    int64_t t = kn_gzc_time_ns(m->sim_time->sec, m->sim_time->nsec);
    if (f->have_stats && f->have_time && m->iterations < f->iterations)
        reset_event(f, t); /* a reset sets the iteration count back */
    set_time(f, t);
    f->paused = m->paused;
    f->iterations = m->iterations;
    f->have_stats = true;
    if ((f->st.have & KN_HAVE_ATTITUDE) && f->t_ns - f->pose_t_ns >= KN_GAZEBO_FB_REST_NS)
        at_rest(f);
    return true;
}

static bool finite_n(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return false;
    return true;
}

static void quat_of(const Gazebo__Msgs__Pose *p, double q[4])
{
    q[0] = p->orientation->x;
    q[1] = p->orientation->y;
    q[2] = p->orientation->z;
    q[3] = p->orientation->w;
}

static const Gazebo__Msgs__Pose *find_link(const struct kn_gazebo_fb *f, int k,
                                           const Gazebo__Msgs__PosesStamped *m)
{
    const Gazebo__Msgs__Pose *p = kn_gzc_poses_find(m, f->flipper_link[k][0]);
    return p ? p : kn_gzc_poses_find(m, f->flipper_link[k][1]);
}

bool kn_gazebo_fb_poses(struct kn_gazebo_fb *f, const Gazebo__Msgs__PosesStamped *m)
{
    f->pose_msgs++;
    int64_t t = kn_gzc_time_ns(m->time->sec, m->time->nsec);
    const Gazebo__Msgs__Pose *p = kn_gzc_poses_find(m, f->model);
    if (!p) {
        f->pose_without_model++;
        /* a model's own pose is named without "::" (its links with) */
        for (size_t i = 0; i < m->n_pose && !f->other_model[0]; i++)
            if (m->pose[i]->name && !strstr(m->pose[i]->name, "::"))
                snprintf(f->other_model, sizeof f->other_model, "%s", m->pose[i]->name);
        set_time(f, t);
        return false;
    }
    f->model_seen = true;
    double sim_pos[3] = { p->position->x, p->position->y, p->position->z };
    double q[4], sim_rpy[3];
    quat_of(p, q);
    if (!finite_n(sim_pos, 3)) {
        f->bad_numbers++;
        return false;
    }
    if (kn_conv_quat_to_rpy(q, sim_rpy) != 0) {
        f->bad_quaternion++;
        return false;
    }
    set_time(f, t);
    if (f->npos > 0 && t < f->pos_t[f->npos - 1])
        drop_history(f); /* older than the history: start it over */

    double pos[3], rpy[3];
    kn_conv_vec_from_sim(&f->conv, sim_pos, pos);
    kn_conv_rpy_from_sim(&f->conv, sim_rpy, rpy);

    bool fresh = f->npos == 0 || t > f->pos_t[f->npos - 1];
    if (fresh) {
        double rate[3], acc[3];
        if (f->have_rpy && t > f->rpy_t &&
            kn_conv_rate_from_attitudes(f->rpy_prev, rpy, ns_to_s(t - f->rpy_t), rate) == 0) {
            memcpy(f->st.rate_rad_s, rate, sizeof rate);
            f->st.have |= KN_HAVE_RATE;
        }
        if (f->npos == 3) {
            memmove(f->pos[0], f->pos[1], 2 * sizeof f->pos[0]);
            memmove(&f->pos_t[0], &f->pos_t[1], 2 * sizeof f->pos_t[0]);
            f->npos = 2;
        }
        memcpy(f->pos[f->npos], pos, sizeof pos);
        f->pos_t[f->npos] = t;
        f->npos++;
        /* the acceleration at the middle sample, in its attitude (rpy_prev) */
        if (f->npos == 3 && f->have_rpy &&
            kn_conv_accel_from_positions(
                f->pos[0], f->pos[1], f->pos[2], ns_to_s(f->pos_t[1] - f->pos_t[0]),
                ns_to_s(f->pos_t[2] - f->pos_t[1]), f->rpy_prev, acc) == 0) {
            memcpy(f->st.accel_m_s2, acc, sizeof acc);
            f->st.have |= KN_HAVE_ACCEL;
        }
        memcpy(f->rpy_prev, rpy, sizeof rpy);
        f->rpy_t = t;
        f->have_rpy = true;
    }
    memcpy(f->st.pos_m, pos, sizeof pos);
    memcpy(f->st.rpy_rad, rpy, sizeof rpy);
    f->st.have |= KN_HAVE_POSITION | KN_HAVE_ATTITUDE;
    if (t > f->pose_t_ns || fresh)
        f->pose_t_ns = t;

    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const Gazebo__Msgs__Pose *lp = find_link(f, k, m);
        double lq[4], a;
        if (!lp)
            continue;
        quat_of(lp, lq);
        if (kn_conv_gzc_flipper_from_quat(&f->conv, k, lq, &a) != 0) {
            f->bad_quaternion++;
            continue;
        }
        f->st.flipper_rad[k] = a;
        f->flippers_seen |= (uint8_t)(1u << k);
    }
    if (f->flippers_seen == (1u << KN_NFLIPPERS) - 1)
        f->st.have |= KN_HAVE_FLIPPER;
    return true;
}

bool kn_gazebo_fb_tracks(struct kn_gazebo_fb *f, const Gazebo__Msgs__Vector2d *m)
{
    f->tracks_msgs++;
    if (!isfinite(m->x) || !isfinite(m->y)) {
        f->bad_numbers++;
        return false;
    }
    /* the old speeds ran until now; the new ones from now on */
    if (f->have_time)
        advance_belts(f, f->t_ns);
    f->belt_speed[KN_LEFT] = m->x;
    f->belt_speed[KN_RIGHT] = m->y;
    f->st.belt_speed_m_s[KN_LEFT] = m->x;
    f->st.belt_speed_m_s[KN_RIGHT] = m->y;
    f->st.have |= KN_HAVE_BELT_SPEED | KN_HAVE_BELT_POS;
    return true;
}
