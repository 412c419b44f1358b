/* Test helper: runs tests/lib/krp_robot as a child process on an ephemeral
 * 127.0.0.1 port, points KENAF_ROBOT at it, and reads its event log. */
#ifndef KN_ROBOT_FIXTURE_H
#define KN_ROBOT_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

struct kn_testrobot {
    pid_t pid;
    int port;
    char dir[512]; /* directory holding the log ($KN_TEST_LOGDIR or /tmp) */
    char log[540];
};

/* One REST/FINAL line of the robot's log. */
struct kn_testrobot_pose {
    double t, x, y, z, yaw, turned;
    int left, right;
};

/* Starts the robot with extra arguments (NULL-terminated list, may be
 * NULL); with port > 0 it binds that port. Sets KENAF_ROBOT. Aborts the
 * test (ck_abort) if the robot does not report its port within 10 s. */
void kn_testrobot_start(struct kn_testrobot *r, int port, const char *const *args);

/* SIGTERM, wait (SIGKILL after 10 s). The log then ends with FINAL. */
void kn_testrobot_stop(struct kn_testrobot *r);

/* SIGKILL and wait: the robot vanishes without a FINAL line. */
void kn_testrobot_kill(struct kn_testrobot *r);

/* Number of log lines starting with `event` (e.g. "CRAWLER"), and with
 * `contains` somewhere in them when not NULL. */
int kn_testrobot_count(const struct kn_testrobot *r, const char *event, const char *contains);

/* Waits (polling the log file, deadline timeout_s) until such a line exists. */
bool kn_testrobot_wait_for(const struct kn_testrobot *r, const char *event, const char *contains,
                           double timeout_s);

/* The n-th (0-based; -1 = last) line starting with event, parsed as a pose. */
bool kn_testrobot_pose(const struct kn_testrobot *r, const char *event, int n,
                       struct kn_testrobot_pose *out);

/* Simulated time of the first line with `event` after the first line with
 * `after_event` (NULL: from the start); -1 if none. */
double kn_testrobot_time_of(const struct kn_testrobot *r, const char *event,
                            const char *after_event);

/* The KENAF_* environment a test starts from: defaults except the given
 * link timeout. */
void kn_test_env(int timeout_ms);

/* Monotonic seconds, for measuring how long a call took. */
double kn_now_s(void);

/* A KRP/1 datagram to the robot from a socket of the test's own, e.g. an
 * operator's ESTOP. */
void kn_testrobot_send_estop(const struct kn_testrobot *r, int engage);

#endif
