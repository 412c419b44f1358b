/* The gz backend's feedback, pure: sim time, the model's pose and its
 * flipper joints into the neutral state (backend_gz.h). gz-sim's stock
 * systems report no belt speed, so belts are read from the body's motion
 * through the TrackedVehicle kinematics (convert.h): what the tracks must
 * be doing for the body to move as the poses show. */
#include "backend_gz.h"

#include <math.h>
#include <string.h>

void kn_gzsim_fb_init(struct kn_gzsim_fb *f, const struct kn_conv_table *t)
{
    memset(f, 0, sizeof *f);
    f->conv = *t;
    f->st.accel_m_s2[2] = KN_GRAVITY;
}

void kn_gzsim_fb_restart(struct kn_gzsim_fb *f)
{
    f->npos = 0;
    f->have_rpy = false;
    f->have_time = false;
    f->pose_t_ns = 0;
}

static void at_rest(struct kn_gzsim_fb *f)
{
    f->st.belt_speed_m_s[0] = f->st.belt_speed_m_s[1] = 0.0;
    memset(f->st.rate_rad_s, 0, sizeof f->st.rate_rad_s);
    double g[3] = { 0, 0, KN_GRAVITY };
    kn_conv_world_to_body(f->st.rpy_rad, g, f->st.accel_m_s2);
}

bool kn_gzsim_fb_clock(struct kn_gzsim_fb *f, int64_t sim_ns)
{
    f->clocks++;
    if (f->have_time && sim_ns < f->t_ns - KN_GZSIM_FB_RESET_NS) {
        f->resets++;
        kn_gzsim_fb_restart(f);
    }
    f->t_ns = sim_ns;
    f->have_time = true;
    f->st.time_s = (double)sim_ns / 1e9;
    f->st.have |= KN_HAVE_TIME;
    if (f->npos > 0 && sim_ns - f->pose_t_ns > KN_GZSIM_FB_REST_NS) {
        at_rest(f);
        f->npos = 1; /* the next pose starts a new history from the last one */
        f->pos_t[0] = sim_ns;
        f->pose_t_ns = sim_ns;
    }
    return true;
}

bool kn_gzsim_fb_pose(struct kn_gzsim_fb *f, const double pos[3], const double q[4],
                      int64_t stamp_ns)
{
    double rpy[3];
    if (!isfinite(pos[0]) || !isfinite(pos[1]) || !isfinite(pos[2]) ||
        kn_conv_quat_to_rpy(q, rpy) < 0) {
        f->bad_numbers++;
        return false;
    }
    f->poses++;
    int64_t t = stamp_ns >= 0 ? stamp_ns : f->t_ns;
    if (f->npos > 0 && t <= f->pos_t[f->npos - 1]) {
        /* same instant again (or older): take the values, derive nothing */
        memcpy(f->st.pos_m, pos, sizeof f->st.pos_m);
        memcpy(f->st.rpy_rad, rpy, sizeof rpy);
        return true;
    }
    if (f->npos == 3) {
        memmove(f->pos[0], f->pos[1], sizeof f->pos[0] * 2);
        memmove(&f->pos_t[0], &f->pos_t[1], sizeof f->pos_t[0] * 2);
        f->npos = 2;
    }
    memcpy(f->pos[f->npos], pos, sizeof f->pos[0]);
    f->pos_t[f->npos] = t;
    f->npos++;
    f->pose_t_ns = t;
    memcpy(f->st.pos_m, pos, sizeof f->st.pos_m);
    f->st.have |= KN_HAVE_POSITION | KN_HAVE_ATTITUDE;
    if (f->npos >= 2) {
        double dt = (double)(f->pos_t[f->npos - 1] - f->pos_t[f->npos - 2]) / 1e9;
        double rate[3];
        if (f->have_rpy && kn_conv_rate_from_attitudes(f->rpy_prev, rpy, dt, rate) == 0) {
            memcpy(f->st.rate_rad_s, rate, sizeof rate);
            f->st.have |= KN_HAVE_RATE;
        }
        double vw[3], vb[3];
        for (int i = 0; i < 3; i++)
            vw[i] = (f->pos[f->npos - 1][i] - f->pos[f->npos - 2][i]) / dt;
        kn_conv_world_to_body(rpy, vw, vb);
        double belts[2];
        kn_conv_gz_twist_to_belts(&f->conv, vb[0], f->st.rate_rad_s[2], belts);
        for (int s = 0; s < 2; s++) {
            f->st.belt_speed_m_s[s] = belts[s];
            f->st.belt_pos_m[s] += belts[s] * dt;
        }
        f->st.have |= KN_HAVE_BELT_SPEED | KN_HAVE_BELT_POS;
    }
    if (f->npos == 3) {
        double dt01 = (double)(f->pos_t[1] - f->pos_t[0]) / 1e9;
        double dt12 = (double)(f->pos_t[2] - f->pos_t[1]) / 1e9;
        double acc[3];
        if (kn_conv_accel_from_positions(f->pos[0], f->pos[1], f->pos[2], dt01, dt12, rpy, acc) ==
            0) {
            memcpy(f->st.accel_m_s2, acc, sizeof acc);
            f->st.have |= KN_HAVE_ACCEL;
        }
    }
    memcpy(f->st.rpy_rad, rpy, sizeof rpy);
    memcpy(f->rpy_prev, rpy, sizeof rpy);
    f->have_rpy = true;
    return true;
}

bool kn_gzsim_fb_joints(struct kn_gzsim_fb *f, const double joint_rad[KN_NFLIPPERS], uint32_t found)
{
    f->joint_msgs++;
    bool any = false;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(found & (1u << k)))
            continue;
        if (!isfinite(joint_rad[k])) {
            f->bad_numbers++;
            continue;
        }
        f->st.flipper_rad[k] = kn_conv_joint_to_flipper(&f->conv, k, joint_rad[k]);
        any = true;
    }
    if (any)
        f->st.have |= KN_HAVE_FLIPPER;
    return any;
}
