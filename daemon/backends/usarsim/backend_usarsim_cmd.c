/* The USARSim client: commands into lines. DRIVE for the belts, SET per
 * flipper joint (UDK) or one MULTIDRIVE (UT2004), each only when what it
 * would print changed; the lockstep KENAF Step of the built-in engine. */
#include "backend_usarsim_priv.h"

#include <math.h>
#include <string.h>

/* Commands go out with 4 decimals: compare what is printed, and never
 * print "-0.0000" for a value that is zero on the wire. */
static double printed(double v)
{
    if (!isfinite(v))
        return 0.0;
    double r = round(v * PRINT_SCALE) / PRINT_SCALE;
    if (!isfinite(r))
        return v; /* beyond 1e304: the formatter refuses it anyway */
    return r == 0.0 ? 0.0 : r;
}

static void add_drive(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply, char *buf,
                      size_t cap, size_t *len)
{
    double w[2];
    for (int s = 0; s < 2; s++)
        w[s] = printed(kn_conv_belt_to_wheel(&u->t, cmd->belt_speed_m_s[s]));
    /* DRIVE is sticky in USARSim and TCP loses nothing: a repeat would
     * change nothing, so only changes go out (and everything on reapply) */
    if (!reapply && w[0] == u->drive_wheel[0] && w[1] == u->drive_wheel[1]) {
        u->drive_repeats++;
        return;
    }
    size_t before = *len;
    kn_usarsim_append(u, buf, len, kn_usar_fmt_drive(buf + *len, cap - *len, w[0], w[1]));
    if (*len == before)
        return;
    u->drive_wheel[0] = w[0];
    u->drive_wheel[1] = w[1];
    u->drive_sent_n++;
    if (u->have_conf_max_speed &&
        (fabs(w[0]) > u->conf_max_speed + 1e-4 || fabs(w[1]) > u->conf_max_speed + 1e-4))
        u->drive_over_max++;
}

static void add_flippers(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply,
                         uint64_t now, char *buf, size_t cap, size_t *len)
{
    double joint[KN_NFLIPPERS];
    uint8_t send = 0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(cmd->flipper_mask & (1u << k)))
            continue;
        joint[k] = printed(kn_conv_flipper_to_joint(&u->t, k, cmd->flipper_rad[k]));
        if (!reapply && u->joint_sent[k] && u->joint_val[k] == joint[k]) {
            u->joint_repeats++;
            continue;
        }
        send |= (uint8_t)(1u << k);
    }
    if (!send)
        return;
    if (u->dialect == KN_USARSIM_UT2004) {
        /* one MULTIDRIVE in the order clients send it: FR, FL, RR, RL */
        static const int order[KN_NFLIPPERS] = { KN_FR, KN_FL, KN_RR, KN_RL };
        const char *names[KN_NFLIPPERS];
        double vals[KN_NFLIPPERS];
        size_t n = 0;
        for (int i = 0; i < KN_NFLIPPERS; i++) {
            int k = order[i];
            if (send & (1u << k)) {
                names[n] = u->joint[k];
                vals[n++] = joint[k];
            }
        }
        size_t before = *len;
        kn_usarsim_append(u, buf, len,
                          kn_usar_fmt_multidrive(buf + *len, cap - *len, names, vals, n));
        if (*len == before)
            return;
        u->multidrive_sent++;
    } else {
        for (int k = 0; k < KN_NFLIPPERS; k++) {
            if (!(send & (1u << k)))
                continue;
            size_t before = *len;
            kn_usarsim_append(u, buf, len,
                              kn_usar_fmt_set_joint(buf + *len, cap - *len, u->joint[k], joint[k]));
            if (*len == before)
                send &= (uint8_t) ~(1u << k);
        }
    }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (!(send & (1u << k)))
            continue;
        u->joint_sent[k] = true;
        u->joint_val[k] = joint[k];
        u->joint_sent_n++;
        /* without a fresh angle (the UDK Kenaf reports none), the target
         * is the best there is: shown, without KN_HAVE_FLIPPER */
        u->fl[k].target = kn_conv_joint_to_flipper(&u->t, k, joint[k]);
        u->fl[k].target_ns = now;
        u->fl[k].have_target = true;
    }
    kn_usarsim_resolve_flippers(u, now);
}

void kn_usarsim_command(struct kn_usarsim *u, const struct kn_command *cmd, bool reapply,
                        uint64_t now_ns)
{
    char buf[CMD_BUF];
    size_t len = 0;
    buf[0] = '\0';
    u->now_ns = now_ns;
    add_drive(u, cmd, reapply, buf, sizeof buf, &len);
    add_flippers(u, cmd, reapply, now_ns, buf, sizeof buf, &len);
    kn_usarsim_write_out(u, buf, len);
}

void kn_usarsim_trial(struct kn_usarsim *u, bool reset)
{
    char buf[64];
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, sizeof buf, "KENAF");
    kn_usar_w_kv(&w, "Cmd", reset ? "TrialReset" : "TrialEstop");
    int n = kn_usar_w_end(&w);
    if (n <= 0) {
        u->format_errors++;
        return;
    }
    u->trial_cmds++;
    kn_usarsim_write_out(u, buf, (size_t)n);
}

void kn_usarsim_step(struct kn_usarsim *u, uint32_t advance_us)
{
    char buf[96];
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, sizeof buf, "KENAF");
    kn_usar_w_kv(&w, "Cmd", "Step");
    kn_usar_w_knum(&w, "Ms", advance_us / 1000.0, 3);
    int n = kn_usar_w_end(&w);
    if (n <= 0) {
        u->format_errors++;
        if (u->io.stepped)
            u->io.stepped(u->io.ctx, false);
        return;
    }
    u->steps_asked++;
    kn_usarsim_write_out(u, buf, (size_t)n);
}
