/* Runs krp_robot (path in $KN_TEST_ROBOT, set by meson) for a test and
 * reads its log. Waiting is always on a condition with a deadline. */
#include "robot_fixture.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "krp.h"

double kn_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void kn_test_env(int timeout_ms)
{
    char v[16];
    snprintf(v, sizeof v, "%d", timeout_ms);
    setenv("KENAF_TIMEOUT_MS", v, 1);
    unsetenv("KENAF_STATUS_MS");
    unsetenv("KENAF_DEBUG");
    unsetenv("KENAF_ROBOT");
}

void kn_testrobot_start(struct kn_testrobot *r, int port, const char *const *args)
{
    const char *exe = getenv("KN_TEST_ROBOT");
    ck_assert_msg(exe != NULL, "KN_TEST_ROBOT is not set (run the test through meson)");
    memset(r, 0, sizeof *r);
    /* Logs stay for a look after a failure: under the build tree when
     * meson says where, else in /tmp. */
    const char *base = getenv("KN_TEST_LOGDIR");
    if (base == NULL || *base == '\0')
        base = "/tmp";
    mkdir(base, 0755);
    snprintf(r->dir, sizeof r->dir, "%s/kn-robot-XXXXXX", base);
    ck_assert_msg(mkdtemp(r->dir) != NULL, "mkdtemp %s: %s", r->dir, strerror(errno));
    snprintf(r->log, sizeof r->log, "%s/robot.log", r->dir);

    char portarg[16];
    snprintf(portarg, sizeof portarg, "%d", port);
    const char *argv[32] = { exe, "--port", portarg, "--log", r->log };
    int n = 5;
    for (int i = 0; args != NULL && args[i] != NULL && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;

    int out[2];
    ck_assert(pipe(out) == 0);
    r->pid = fork();
    ck_assert(r->pid >= 0);
    if (r->pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        close(out[0]);
        close(out[1]);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);

    char line[64] = "";
    size_t len = 0;
    double deadline = kn_now_s() + 10.0;
    while (len < sizeof line - 1 && strchr(line, '\n') == NULL && kn_now_s() < deadline) {
        struct pollfd p = { .fd = out[0], .events = POLLIN };
        if (poll(&p, 1, 100) <= 0)
            continue;
        ssize_t got = read(out[0], line + len, sizeof line - 1 - len);
        if (got <= 0)
            break;
        len += (size_t)got;
        line[len] = '\0';
    }
    close(out[0]);
    ck_assert_msg(sscanf(line, "PORT %d", &r->port) == 1 && r->port > 0,
                  "robot did not report its port: '%s'", line);

    char addr[32];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", r->port);
    setenv("KENAF_ROBOT", addr, 1);
}

static void reap(struct kn_testrobot *r, int sig)
{
    if (r->pid <= 0)
        return;
    kill(r->pid, sig);
    double deadline = kn_now_s() + 10.0;
    int status;
    while (waitpid(r->pid, &status, WNOHANG) == 0) {
        if (kn_now_s() > deadline) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, &status, 0);
            break;
        }
        struct timespec ts = { 0, 10000000 };
        nanosleep(&ts, NULL);
    }
    r->pid = 0;
}

void kn_testrobot_stop(struct kn_testrobot *r)
{
    reap(r, SIGTERM);
}

void kn_testrobot_kill(struct kn_testrobot *r)
{
    reap(r, SIGKILL);
}

static bool line_matches(const char *line, const char *event, const char *contains)
{
    size_t n = strlen(event);
    return strncmp(line, event, n) == 0 && line[n] == ' ' &&
           (contains == NULL || strstr(line, contains) != NULL);
}

int kn_testrobot_count(const struct kn_testrobot *r, const char *event, const char *contains)
{
    FILE *f = fopen(r->log, "r");
    if (f == NULL)
        return 0;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL)
        n += line_matches(line, event, contains);
    fclose(f);
    return n;
}

bool kn_testrobot_wait_for(const struct kn_testrobot *r, const char *event, const char *contains,
                           double timeout_s)
{
    double deadline = kn_now_s() + timeout_s;
    do {
        if (kn_testrobot_count(r, event, contains) > 0)
            return true;
        struct timespec ts = { 0, 20000000 };
        nanosleep(&ts, NULL);
    } while (kn_now_s() < deadline);
    return kn_testrobot_count(r, event, contains) > 0;
}

bool kn_testrobot_pose(const struct kn_testrobot *r, const char *event, int n,
                       struct kn_testrobot_pose *out)
{
    FILE *f = fopen(r->log, "r");
    if (f == NULL)
        return false;
    char line[512];
    int seen = 0;
    bool found = false;
    while (fgets(line, sizeof line, f) != NULL) {
        if (!line_matches(line, event, NULL))
            continue;
        if (n < 0 || seen == n) {
            struct kn_testrobot_pose p;
            char fmt[128];
            snprintf(fmt, sizeof fmt,
                     "%s t=%%lf x=%%lf y=%%lf z=%%lf yaw=%%lf turned=%%lf left=%%d right=%%d",
                     event);
            if (sscanf(line, fmt, &p.t, &p.x, &p.y, &p.z, &p.yaw, &p.turned, &p.left, &p.right) ==
                8) {
                *out = p;
                found = true;
            }
            if (n >= 0)
                break;
        }
        seen++;
    }
    fclose(f);
    return found;
}

double kn_testrobot_time_of(const struct kn_testrobot *r, const char *event,
                            const char *after_event)
{
    FILE *f = fopen(r->log, "r");
    if (f == NULL)
        return -1;
    char line[512];
    bool armed = after_event == NULL;
    double t = -1;
    while (fgets(line, sizeof line, f) != NULL) {
        if (!armed) {
            armed = line_matches(line, after_event, NULL);
            continue;
        }
        if (line_matches(line, event, NULL)) {
            const char *p = strstr(line, " t=");
            if (p != NULL)
                t = strtod(p + 3, NULL);
            break;
        }
    }
    fclose(f);
    return t;
}

void kn_testrobot_send_estop(const struct kn_testrobot *r, int engage)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ck_assert(fd >= 0);
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)r->port) };
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_ESTOP, 1, 0);
    m.u.estop.engage = (uint8_t)engage;
    uint8_t buf[KN_KRP_MAX_DGRAM];
    size_t n = kn_krp_encode(&m, buf, sizeof buf);
    ck_assert(sendto(fd, buf, n, 0, (struct sockaddr *)&sa, sizeof sa) == (ssize_t)n);
    close(fd);
}
