/* Unit tests of kenaf-simd's systemd notifications (daemon/notify.c),
 * spoken as systemd's protocol says without libsystemd: a datagram to
 * the socket NOTIFY_SOCKET names, a path or an abstract name ("@"), and
 * the watchdog's interval from WATCHDOG_USEC, only for the process
 * WATCHDOG_PID names. The daemon's system tests (daemon-sys-ops,
 * daemon-service-*) receive READY, STATUS, WATCHDOG and STOPPING on a
 * socket path; this adds the abstract name and the refusals. Each test
 * runs in a process of its own (Check forks), so each reads the
 * environment afresh. */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "harness_suite.h"
#include "notify.h"

/* An abstract datagram socket of this process's own name, and that name
 * as NOTIFY_SOCKET gives it. */
static int bind_abstract(char *env_name, size_t len)
{
    snprintf(env_name, len, "@kenaf-notify-test-%ld", (long)getpid());
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    size_t n = strlen(env_name);
    memcpy(a.sun_path, env_name, n);
    a.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(
        bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)),
        0);
    struct timeval tv = { .tv_sec = 10 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

START_TEST(abstract_socket_gets_the_lines)
{
    char name[108];
    int fd = bind_abstract(name, sizeof name);
    ck_assert_int_eq(setenv("NOTIFY_SOCKET", name, 1), 0);
    kn_notify("READY=1");
    kn_notify("STATUS=%d robots", 3);
    char buf[256];
    ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
    ck_assert_int_eq(n, 7);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "READY=1");
    n = recv(fd, buf, sizeof buf - 1, 0);
    ck_assert_int_gt(n, 0);
    buf[n] = '\0';
    ck_assert_str_eq(buf, "STATUS=3 robots");
    close(fd);
}
END_TEST

/* What kn_notify says on stderr while it runs the line it is given. */
static const char *stderr_of_notify(const char *line)
{
    static char out[1024];
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    int saved = dup(2);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_eq(dup2(fileno(f), 2), 2);
    kn_notify("%s", line);
    ck_assert_int_eq(dup2(saved, 2), 2);
    close(saved);
    rewind(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

START_TEST(no_socket_does_nothing)
{
    unsetenv("NOTIFY_SOCKET");
    /* nothing to send to, and nothing to say */
    ck_assert_str_eq(stderr_of_notify("READY=1"), "");
    /* the environment is read once per process */
    ck_assert_int_eq(setenv("NOTIFY_SOCKET", "relative/path", 1), 0);
    ck_assert_str_eq(stderr_of_notify("READY=1"), "");
}
END_TEST

START_TEST(a_name_that_is_no_socket_is_refused)
{
    ck_assert_int_eq(setenv("NOTIFY_SOCKET", "relative/path", 1), 0);
    const char *said = stderr_of_notify("READY=1");
    ck_assert_msg(strstr(said, "systemd notifications off: NOTIFY_SOCKET \"relative/path\""),
                  "said: %s", said);
    /* said once: the next line is dropped without a word */
    ck_assert_str_eq(stderr_of_notify("STATUS=x"), "");
}
END_TEST

START_TEST(watchdog_interval_and_its_process)
{
    uint64_t us = 0;
    char pid[32];
    unsetenv("WATCHDOG_USEC");
    unsetenv("WATCHDOG_PID");
    ck_assert(!kn_notify_watchdog(&us));
    setenv("WATCHDOG_USEC", "200000", 1);
    ck_assert(kn_notify_watchdog(&us));
    ck_assert_uint_eq(us, 200000);
    /* meant for this process, or for another (a shell between) */
    snprintf(pid, sizeof pid, "%ld", (long)getpid());
    setenv("WATCHDOG_PID", pid, 1);
    us = 0;
    ck_assert(kn_notify_watchdog(&us));
    ck_assert_uint_eq(us, 200000);
    snprintf(pid, sizeof pid, "%ld", (long)getpid() + 1);
    setenv("WATCHDOG_PID", pid, 1);
    ck_assert(!kn_notify_watchdog(&us));
    unsetenv("WATCHDOG_PID");
    /* not a whole positive number of microseconds: no watchdog */
    const char *bad[] = { "0", "-5", "12x", "", "99999999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("WATCHDOG_USEC", bad[i], 1);
        ck_assert_msg(!kn_notify_watchdog(&us), "WATCHDOG_USEC=%s taken", bad[i]);
    }
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "abstract_socket_gets_the_lines", abstract_socket_gets_the_lines, 30, NULL, NULL },
        { "no_socket_does_nothing", no_socket_does_nothing, 30, NULL, NULL },
        { "a_name_that_is_no_socket_is_refused", a_name_that_is_no_socket_is_refused, 30, NULL,
          NULL },
        { "watchdog_interval_and_its_process", watchdog_interval_and_its_process, 30, NULL, NULL },
    };
    return h_run_cases("notify", cases, sizeof cases / sizeof cases[0]);
}
