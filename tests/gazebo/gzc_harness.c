/* Helpers for the gazebo system tests: see gzc_harness.h. */
#include "gzc_harness.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gzc_sim_start(struct h_standin *s, int port, const char *name, const char *const extra[])
{
    h_sim_start(s, "KN_GZC_STANDIN", false, port, name, extra);
}

const char *gzc_robots_json(int port, const char *gazebo_extra)
{
    static char buf[2048];
    snprintf(buf, sizeof buf,
             "[{\"name\":\"kenaf\",\"listen\":\"127.0.0.1:0\",\"counts_per_m\":4000,"
             "\"backend\":{\"type\":\"gazebo\",\"address\":\"127.0.0.1:%d\","
             "\"flippers\":{\"FL\":{\"joint\":\"front_left_flipper_joint\"},"
             "\"FR\":{\"joint\":\"front_right_flipper_joint\"},"
             "\"RL\":{\"joint\":\"rear_left_flipper_joint\"},"
             "\"RR\":{\"joint\":\"rear_right_flipper_joint\"}},"
             "\"gazebo\":{\"model\":\"kenaf\",\"tracks_separation_m\":0.23,"
             "\"steering_efficiency\":0.5%s%s%s}}}]",
             port,
             /* gazebo_standin's plugin limit unless the test sets its own */
             strstr(gazebo_extra, "max_angular_speed_rad_s") ? ""
                                                             : ",\"max_angular_speed_rad_s\":8",
             gazebo_extra[0] ? "," : "", gazebo_extra);
    return buf;
}

void gzc_test_table(struct kn_conv_table *t)
{
    kn_conv_table_gazebo(t);
    t->tracks_separation_m = 0.23;
    t->steering_efficiency = 0.5;
    /* gazebo_standin's plugin limits, which the tests' configs give kenaf-simd too */
    t->max_angular_speed_rad_s = 8.0;
    /* the config's default flipper mapping: front -1, rear +1, no offset */
    t->flipper_sign[0] = t->flipper_sign[1] = -1;
    t->flipper_sign[2] = t->flipper_sign[3] = 1;
}

static bool parse_twist(const char *line, void *item)
{
    struct gzc_twist *w = item;
    unsigned long long t;
    char kind[16];
    if (sscanf(line, "%llu %15s %lf %lf belts %lf %lf", &t, kind, &w->lin, &w->ang, &w->belts[0],
               &w->belts[1]) != 6 ||
        (strcmp(kind, "twist") != 0 && strcmp(kind, "posecmd") != 0))
        return false;
    w->t_us = t;
    w->pose_form = kind[0] == 'p';
    return true;
}

int gzc_log_twists(const char *log, struct gzc_twist *out, int max)
{
    return h_parse_lines(log, out, sizeof *out, max, parse_twist);
}

static bool parse_joint(const char *line, void *item)
{
    struct gzc_joint *j = item;
    unsigned long long t;
    if (sscanf(line, "%llu joint %159s %lf", &t, j->name, &j->target) != 3)
        return false;
    j->t_us = t;
    return true;
}

int gzc_log_joints(const char *log, struct gzc_joint *out, int max)
{
    return h_parse_lines(log, out, sizeof *out, max, parse_joint);
}

struct pose {
    bool found;
    double t, v[7];
};

static bool take_pose(const char *line, void *arg)
{
    struct pose *p = arg;
    unsigned long long us;
    double a, b[7];
    if (sscanf(line, "%llu pose %lf %lf %lf %lf %lf %lf %lf %lf", &us, &a, &b[0], &b[1], &b[2],
               &b[3], &b[4], &b[5], &b[6]) == 9) {
        p->t = a;
        memcpy(p->v, b, sizeof b);
        p->found = true;
    }
    return true;
}

bool gzc_log_last_pose(const char *log, double *t, double v[7])
{
    struct pose p = { .found = false };
    h_each_line(log, take_pose, &p);
    if (p.found) {
        *t = p.t;
        memcpy(v, p.v, sizeof p.v);
    }
    return p.found;
}

struct first {
    const char *needle;
    uint64_t at;
};

static bool find_first(const char *line, void *arg)
{
    struct first *f = arg;
    if (!strstr(line, f->needle))
        return true;
    f->at = strtoull(line, NULL, 10);
    return false;
}

uint64_t gzc_log_first(const char *log, const char *needle)
{
    struct first f = { needle, 0 };
    h_each_line(log, find_first, &f);
    return f.at;
}

/* ---- frames on raw sockets ---- */

long gzc_read_frame(int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    uint8_t hdr[9];
    int r = h_read_exact(fd, hdr, 8, end);
    if (r <= 0)
        return r == 0 ? 0 : -1;
    hdr[8] = 0;
    char *e;
    unsigned long n = strtoul((char *)hdr, &e, 16);
    ck_assert_msg(*e == '\0' && n > 0 && n <= cap, "bad frame header \"%s\"", (char *)hdr);
    r = h_read_exact(fd, buf, n, end);
    ck_assert_msg(r == 1, "frame of %lu bytes cut short", n);
    return (long)n;
}

bool gzc_read_packet(int fd, struct kn_pbarena *a, uint8_t *buf, size_t cap,
                     struct kn_gzc_packet *pk, int timeout_ms)
{
    long n = gzc_read_frame(fd, buf, cap, timeout_ms);
    if (n <= 0)
        return false;
    kn_pbarena_reset(a);
    ck_assert_msg(kn_gzc_dec_packet(a, buf, (size_t)n, pk) == 0, "a frame that is not a Packet");
    return true;
}

bool gzc_expect_packet(int fd, struct kn_pbarena *a, uint8_t *buf, size_t cap, const char *type,
                       struct kn_gzc_packet *pk, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        int64_t left = (int64_t)(end - h_now_us()) / 1000;
        if (left <= 0 || !gzc_read_packet(fd, a, buf, cap, pk, (int)left))
            return false;
        if (strcmp(pk->type, type) == 0)
            return true;
    }
}
