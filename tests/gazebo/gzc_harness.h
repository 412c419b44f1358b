/* Helpers for the gazebo system tests (on top of tests/daemon/harness.h):
 * starting gazebo_standin, the daemon config for it, and reading what the
 * stand-in recorded in its log (standin_world.c, standin_master.c). */
#ifndef KN_GZC_HARNESS_H
#define KN_GZC_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "convert.h"
#include "gzc_codec.h"
#include "harness.h"

/* gazebo_standin ($KN_GZC_STANDIN), not under KN_WRAP; h_sim_start says
 * the rest. */
void gzc_sim_start(struct h_standin *s, int port, const char *name, const char *const extra[]);

/* The robots array for kenaf-simd: one gazebo robot on the stand-in's
 * joints; gazebo_extra is appended inside the "gazebo" object (or ""). */
const char *gzc_robots_json(int port, const char *gazebo_extra);

/* The conversion table the daemon builds from that config. */
void gzc_test_table(struct kn_conv_table *t);

/* "<us> twist <lin> <ang> belts <L> <R>" and "<us> posecmd ..." lines */
struct gzc_twist {
    uint64_t t_us;
    bool pose_form;
    double lin, ang, belts[2];
};
int gzc_log_twists(const char *log, struct gzc_twist *out, int max);

/* "<us> joint <name> <target>" lines */
struct gzc_joint {
    uint64_t t_us;
    char name[160];
    double target;
};
int gzc_log_joints(const char *log, struct gzc_joint *out, int max);

/* The last "pose" line: sim time, x, y, yaw, four joint angles. */
bool gzc_log_last_pose(const char *log, double *t, double v[7]);

/* Time stamp of the first line containing needle, 0 when none. */
uint64_t gzc_log_first(const char *log, const char *needle);

/* ---- Gazebo frames on raw sockets (harness_net.h), for tests that play
 * master, publisher or client ---- */

/* One frame (header read and checked here, not with the codec's framer):
 * its payload length, 0 on EOF, -1 on timeout. */
long gzc_read_frame(int fd, uint8_t *buf, size_t cap, int timeout_ms);
/* One frame as a Packet (decoded into arena, reset first); false on
 * timeout or EOF; a frame that is not a Packet fails the test. */
bool gzc_read_packet(int fd, struct kn_pbarena *a, uint8_t *buf, size_t cap,
                     struct kn_gzc_packet *pk, int timeout_ms);
/* Reads packets until one of type `type` (others skipped); false on timeout. */
bool gzc_expect_packet(int fd, struct kn_pbarena *a, uint8_t *buf, size_t cap, const char *type,
                       struct kn_gzc_packet *pk, int timeout_ms);
#endif
