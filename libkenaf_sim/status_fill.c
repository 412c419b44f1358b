/* STATUS -> hrt_status and its printed form. Every scaling goes through
 * protocols/convert.h; fields whose API unit equals the wire unit (counts,
 * mm/s, mm/s^2, mm) are only widened to double. */
#include "status_fill.h"

#include <stdio.h>
#include <string.h>

#include "convert.h"

void kn_status_fill(const struct kn_krp_status *in, hrt_status *out)
{
    memset(out, 0, sizeof *out);
    out->time_s = kn_conv_us_to_s(in->time_us);
    for (int i = 0; i < 2; i++) {
        out->crawler_count[i] = in->crawler_count[i];
        out->crawler_speed[i] = in->crawler_speed_mm_s[i];
    }
    for (int k = 0; k < 4; k++) {
        out->flipper_angle[k] = kn_conv_cdeg_to_deg(in->flipper_cdeg[k]);
        out->flipper_torque[k] = kn_conv_mnm_to_nm(in->flipper_torque_mnm[k]);
    }
    out->roll = kn_conv_cdeg_to_deg(in->rpy_cdeg[0]);
    out->pitch = kn_conv_cdeg_to_deg(in->rpy_cdeg[1]);
    out->yaw = kn_conv_cdeg_to_deg(in->rpy_cdeg[2]);
    for (int i = 0; i < 3; i++) {
        out->angular_rate[i] = kn_conv_mdeg_to_deg(in->rate_mdeg_s[i]);
        out->acceleration[i] = in->accel_mm_s2[i];
        out->position[i] = in->pos_mm[i];
    }
    out->battery = kn_conv_mv_to_v(in->battery_mv);
    out->flags = in->flags;
}

void kn_status_flag_names(uint32_t flags, char *buf, size_t cap)
{
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {
        { HRT_FLAG_ESTOP, "ESTOP" },         { HRT_FLAG_BACKEND_UP, "BACKEND_UP" },
        { HRT_FLAG_SIMULATED, "SIMULATED" }, { HRT_FLAG_WATCHDOG, "WATCHDOG" },
        { HRT_FLAG_CLAMPED, "CLAMPED" },     { HRT_FLAG_STALE, "STALE" },
    };
    size_t n = 0;
    if (cap == 0)
        return;
    buf[0] = '\0';
    uint32_t rest = flags;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (flags & names[i].bit) {
            int w = snprintf(buf + n, cap - n, "%s%s", n ? " " : "", names[i].name);
            if (w < 0 || (size_t)w >= cap - n)
                return;
            n += (size_t)w;
            rest &= ~names[i].bit;
        }
    }
    if (rest != 0) {
        int w = snprintf(buf + n, cap - n, "%s0x%x", n ? " " : "", (unsigned)rest);
        if (w < 0 || (size_t)w >= cap - n)
            return;
        n += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, cap, "none");
}

void kn_status_format(const hrt_status *st, const char *robot_name, char *buf, size_t cap)
{
    char flags[128];
    kn_status_flag_names(st->flags, flags, sizeof flags);
    snprintf(buf, cap,
             "Kenaf %s%s  t=%.3f s\n"
             "  crawler   count L %d R %d   speed L %.0f R %.0f mm/s\n"
             "  flippers  FL %.2f FR %.2f RL %.2f RR %.2f deg\n"
             "  attitude  roll %.2f pitch %.2f yaw %.2f deg\n"
             "  position  x %.0f y %.0f z %.0f mm\n"
             "  battery   %.2f V\n"
             "  flags     %s\n",
             robot_name, (st->flags & HRT_FLAG_SIMULATED) ? " (simulated)" : "", st->time_s,
             (int)st->crawler_count[0], (int)st->crawler_count[1], st->crawler_speed[0],
             st->crawler_speed[1], st->flipper_angle[0], st->flipper_angle[1], st->flipper_angle[2],
             st->flipper_angle[3], st->roll, st->pitch, st->yaw, st->position[0], st->position[1],
             st->position[2], st->battery, flags);
}
