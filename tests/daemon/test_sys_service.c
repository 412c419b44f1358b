/* kenaf-simd as a service operators use: the stats socket's exact mode
 * whatever the umask, its group (operators in it use --stats and
 * --command, others are refused; root only, since it switches users), the
 * capture directory's path rules (relative and inside paths written there,
 * "..", outside paths and symbolic links refused and counted), and READY=1
 * to a fake NOTIFY_SOCKET only once the simulator link is up, or after
 * ready_timeout_s with the robot whose link is down named. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

#define OPERATOR_GID 4242
#define OPERATOR_UID 4243 /* in group OPERATOR_GID */
#define STRANGER_UID 4244 /* in no group of ours */

static char out[65536], err[65536];

/* A robot on a stand-in simulator at port (nobody need listen there). */
static const char *robots_at(int port)
{
    static char buf[1200];
    snprintf(buf, sizeof buf, "[%s]", h_standin_robot("kenaf", port, NULL));
    return buf;
}

/* A TCP port nobody listens on (taken and released). */
static int idle_port(void)
{
    int port = 0;
    int fd = h_tcp_listen(&port);
    close(fd);
    return port;
}

static unsigned mode_of(const char *path)
{
    struct stat st;
    ck_assert_msg(lstat(path, &st) == 0, "%s: %s", path, strerror(errno));
    return (unsigned)(st.st_mode & 07777);
}

static bool exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* util-linux's setpriv: runs a program as another uid with other groups. */
static const char *setpriv(void)
{
    const char *p = h_which("setpriv");
    ck_assert_msg(p != NULL, "setpriv (util-linux) not found in PATH");
    return p;
}

/* `kenaf-simd --command LINE` (or --stats when line is NULL) against d's
 * socket, as `as` says (NULL: as ourselves; else setpriv arguments). */
static int client(struct h_daemon *d, const char *line, const char *const as[])
{
    char *argv[24];
    int n = 0;
    if (as) {
        argv[n++] = (char *)setpriv();
        for (int i = 0; as[i]; i++)
            argv[n++] = (char *)as[i];
        argv[n++] = "--";
    }
    argv[n++] = getenv("KN_SIMD");
    if (line) {
        argv[n++] = "--command";
        argv[n++] = (char *)line;
    } else {
        argv[n++] = "--stats";
    }
    argv[n++] = "--socket";
    argv[n++] = d->stats;
    argv[n] = NULL;
    return h_run(argv, out, sizeof out, err, sizeof err, H_LONG_MS);
}

static void command_ok(struct h_daemon *d, const char *line)
{
    int rc = client(d, line, NULL);
    ck_assert_msg(rc == 0, "\"%s\" refused (%d): %s%s", line, rc, out, err);
}

static void command_refused(struct h_daemon *d, const char *line, const char *why)
{
    int rc = client(d, line, NULL);
    ck_assert_msg(rc == 1, "\"%s\" should be refused, got %d: %s", line, rc, out);
    ck_assert_msg(strstr(out, why), "\"%s\": expected \"%s\" in: %s", line, why, out);
}

static void wait_closed(struct h_daemon *d)
{
    ck_assert_msg(h_wait_stat_eq(d, "capture.closed", 1, H_LONG_MS), "capture not closed: %s",
                  h_stderr(&d->proc));
}

/* ---- the socket's mode ---------------------------------------------------- */

static void mode_under_umask(mode_t mask, const char *name, const char *mode_key, unsigned want)
{
    char top[600], sock[256];
    snprintf(sock, sizeof sock, "%s/%s-dir/stats.sock", h_path(""), name);
    snprintf(top, sizeof top, "\"ready_timeout_s\": 0%s%s", mode_key ? ", " : "",
             mode_key ? mode_key : "");
    /* the harness keeps a pointer to each daemon's process until teardown */
    static struct h_daemon daemons[4];
    static int used;
    ck_assert_int_lt(used, 4);
    struct h_daemon *d = &daemons[used++];
    mode_t old = umask(mask);
    h_daemon_spawn_at(d, name, sock, top, robots_at(idle_port()), NULL, NULL, true);
    umask(old);
    h_daemon_ready(d);
    ck_assert_msg(mode_of(sock) == want, "umask %03o: socket mode %04o, expected %04o",
                  (unsigned)mask, mode_of(sock), want);
    /* no group configured: the directory it made stays the owner's */
    snprintf(sock, sizeof sock, "%s/%s-dir", h_path(""), name);
    ck_assert_msg(mode_of(sock) == 0700, "umask %03o: socket directory mode %04o, expected 0700",
                  (unsigned)mask, mode_of(sock));
}

START_TEST(socket_mode_exact)
{
    mode_under_umask(0, "open", NULL, 0660);
    mode_under_umask(077, "closed", NULL, 0660);
    mode_under_umask(0, "owner", "\"stats_socket_mode\": \"0600\"", 0600);
    mode_under_umask(077, "group", "\"stats_socket_mode\": \"640\"", 0640);

    /* a group (our own, given by number) makes the directory 0750, its group */
    char top[200], sock[256];
    snprintf(top, sizeof top, "\"ready_timeout_s\": 0, \"stats_socket_group\": %u",
             (unsigned)getegid());
    snprintf(sock, sizeof sock, "%s", h_path("grp-dir/stats.sock"));
    static struct h_daemon d;
    mode_t old = umask(0);
    h_daemon_spawn_at(&d, "grp", sock, top, robots_at(idle_port()), NULL, NULL, true);
    umask(old);
    h_daemon_ready(&d);
    ck_assert_uint_eq(mode_of(sock), 0660);
    ck_assert_uint_eq(mode_of(h_path("grp-dir")), 0750);
    struct stat st;
    ck_assert_int_eq(stat(h_path("grp-dir"), &st), 0);
    ck_assert_uint_eq(st.st_gid, getegid());
}
END_TEST

/* ---- capture path rules ------------------------------------------------------- */

START_TEST(capture_path_rules)
{
    char top[600], caps[256], p[512], line[600];
    snprintf(caps, sizeof caps, "%s", h_path("captures"));
    snprintf(top, sizeof top,
             "\"ready_timeout_s\": 0, \"capture_dir\": \"%s\", "
             "\"capture_max_mb\": 8",
             caps);
    static struct h_daemon d;
    h_daemon_spawn(&d, "kenaf-simd", top, robots_at(idle_port()), NULL, NULL, true);
    h_daemon_ready(&d);
    ck_assert(!exists(caps)); /* made on first use */

    /* a relative name lands in the directory; the reply says where */
    command_ok(&d, "capture start a.pcapng");
    snprintf(p, sizeof p, "\"path\":\"%s/a.pcapng\"", caps);
    ck_assert_msg(strstr(out, p), "expected %s in: %s", p, out);
    command_ok(&d, "capture status");
    ck_assert_msg(strstr(out, p), "expected %s in: %s", p, out);
    command_ok(&d, "capture stop");
    wait_closed(&d);
    ck_assert_uint_eq(mode_of(caps), 0750);
    snprintf(p, sizeof p, "%s/a.pcapng", caps);
    ck_assert_uint_eq(mode_of(p), 0640);

    /* into an existing subdirectory, and by an absolute path inside */
    snprintf(p, sizeof p, "%s/sub", caps);
    ck_assert_int_eq(mkdir(p, 0750), 0);
    command_ok(&d, "capture start sub/b.pcapng max_mb=1");
    ck_assert(strstr(out, "/captures/sub/b.pcapng\""));
    ck_assert(strstr(out, "\"max_bytes\":1048576"));
    command_ok(&d, "capture stop");
    wait_closed(&d);
    snprintf(p, sizeof p, "%s/sub/b.pcapng", caps);
    ck_assert(exists(p));
    snprintf(line, sizeof line, "capture start %s/c.pcapng", caps);
    command_ok(&d, line);
    command_ok(&d, "capture stop");
    wait_closed(&d);
    /* an existing file of its own is replaced */
    command_ok(&d, "capture start a.pcapng");
    command_ok(&d, "capture stop");
    wait_closed(&d);

    /* refused: "..", outside, a link to a file outside, a linked directory,
     * something that is not a plain file, a size cap above the config's */
    h_write_file(h_path("target.pcapng"), "keep");
    ck_assert_int_eq(mkdir(h_path("elsewhere"), 0755), 0);
    snprintf(p, sizeof p, "%s/link.pcapng", caps);
    ck_assert_int_eq(symlink(h_path("target.pcapng"), p), 0);
    snprintf(p, sizeof p, "%s/linkdir", caps);
    ck_assert_int_eq(symlink(h_path("elsewhere"), p), 0);
    snprintf(p, sizeof p, "%s/fifo", caps);
    ck_assert_int_eq(mkfifo(p, 0600), 0);

    command_refused(&d, "capture start ../x.pcapng", "\\\"..\\\" component is refused");
    command_refused(&d, "capture start sub/../../x.pcapng", "\\\"..\\\" component is refused");
    snprintf(line, sizeof line, "capture start %s", h_path("x.pcapng"));
    command_refused(&d, line, "outside the capture directory");
    command_refused(&d, "capture start link.pcapng", "symbolic link");
    command_refused(&d, "capture start linkdir/y.pcapng", "symbolic link");
    command_refused(&d, "capture start fifo", "not a regular file");
    command_refused(&d, "capture start big.pcapng max_mb=9", "above the config's capture_max_mb 8");
    command_refused(&d, "capture start big.pcapng max_mb=0", "above the config's capture_max_mb 8");

    ck_assert(!exists(h_path("x.pcapng")));
    ck_assert(!exists(h_path("elsewhere/y.pcapng")));
    snprintf(p, sizeof p, "%s/big.pcapng", caps);
    ck_assert(!exists(p));
    ck_assert_str_eq(h_file_text(h_path("target.pcapng")), "keep");
    ck_assert_double_eq(h_stat(&d, "capture.refused.outside_dir"), 3);
    ck_assert_double_eq(h_stat(&d, "capture.refused.symlink"), 2);
    ck_assert_double_eq(h_stat(&d, "capture.refused.not_regular_file"), 1);
    ck_assert(strstr(h_stat_str(&d, "capture.last_refusal"), "fifo"));
    ck_assert_double_eq(h_stat(&d, "capture.active"), 0);
}
END_TEST

/* ---- the socket's group, from other users ------------------------------------ */

START_TEST(group_access)
{
    /* the other users must reach the scratch directory and kenaf-simd */
    ck_assert_int_eq(chmod(h_path(""), 0755), 0);
    const char *op[] = { "--reuid", "4243", "--regid", "4243", "--groups", "4242", NULL };
    const char *stranger[] = { "--reuid", "4244", "--regid", "4244", "--clear-groups", NULL };
    char *version[] = {
        (char *)setpriv(), "--reuid",   "4244", "--regid", "4244", "--clear-groups", "--",
        getenv("KN_SIMD"), "--version", NULL
    };
    ck_assert_msg(h_run(version, out, sizeof out, err, sizeof err, H_LONG_MS) == 0,
                  "uid 4244 cannot run %s (a build tree others cannot enter?): %s",
                  getenv("KN_SIMD"), err);

    char top[600], caps[256], sock[256];
    snprintf(caps, sizeof caps, "%s", h_path("captures"));
    snprintf(sock, sizeof sock, "%s", h_path("sock/stats.sock"));
    ck_assert_int_eq(mkdir(h_path("sock"), 0755), 0);
    snprintf(top, sizeof top,
             "\"ready_timeout_s\": 0, \"stats_socket_group\": %d, "
             "\"capture_dir\": \"%s\"",
             OPERATOR_GID, caps);
    static struct h_daemon d;
    h_daemon_spawn_at(&d, "kenaf-simd", sock, top, robots_at(idle_port()), NULL, NULL, true);
    h_daemon_ready(&d);
    struct stat st;
    ck_assert_int_eq(lstat(sock, &st), 0);
    ck_assert_uint_eq(st.st_gid, OPERATOR_GID);
    ck_assert_uint_eq(st.st_mode & 07777, 0660);

    /* an operator: stats and a capture */
    ck_assert_msg(client(&d, NULL, op) == 0, "operator --stats: %s", err);
    ck_assert(strstr(out, "\"robots\""));
    ck_assert_msg(client(&d, "capture start x.pcapng", op) == 0, "operator capture: %s%s", out,
                  err);
    char p[512];
    snprintf(p, sizeof p, "%s/x.pcapng", caps);
    ck_assert(exists(p));
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_uint_eq(st.st_gid, OPERATOR_GID); /* the operators can read it */
    ck_assert_uint_eq(st.st_mode & 07777, 0640);
    ck_assert_int_eq(client(&d, "capture stop", op), 0);
    wait_closed(&d);

    /* anyone else: refused, nothing written */
    ck_assert_int_eq(client(&d, NULL, stranger), 1);
    ck_assert_msg(strcasestr(err, "permission denied"), "expected permission denied: %s", err);
    ck_assert_int_eq(client(&d, "capture start y.pcapng", stranger), 1);
    ck_assert_msg(strcasestr(err, "permission denied"), "expected permission denied: %s", err);
    snprintf(p, sizeof p, "%s/y.pcapng", caps);
    ck_assert(!exists(p));
    ck_assert_double_eq(h_stat(&d, "capture.active"), 0);

    /* a daemon whose user is not in the group says so and does not start */
    ck_assert_int_eq(mkdir(h_path("sock2"), 0755), 0);
    ck_assert_int_eq(chown(h_path("sock2"), OPERATOR_UID, OPERATOR_UID), 0);
    char cfg[2048];
    snprintf(cfg, sizeof cfg,
             "{\"stats_socket\": \"%s\", \"stats_socket_group\": \"%d\", "
             "\"ready_timeout_s\": 0, \"robots\": %s}",
             h_path("sock2/stats.sock"), OPERATOR_GID, robots_at(idle_port()));
    h_write_file(h_path("notmember.json"), cfg);
    ck_assert_int_eq(chmod(h_path("notmember.json"), 0644), 0);
    char *daemon[] = { (char *)setpriv(),
                       "--reuid",
                       "4243",
                       "--regid",
                       "4243",
                       "--clear-groups",
                       "--",
                       getenv("KN_SIMD"),
                       "--config",
                       (char *)h_path("notmember.json"),
                       NULL };
    ck_assert_int_eq(h_run(daemon, out, sizeof out, err, sizeof err, H_LONG_MS), 1);
    ck_assert_msg(strstr(err, "Operation not permitted") &&
                      strstr(err, "not a member of group 4242"),
                  "expected EPERM and why: %s", err);
    ck_assert_msg(strstr(err, h_path("sock2/stats.sock")), "expected the path: %s", err);
    ck_assert(!exists(h_path("sock2/stats.sock")));
}
END_TEST

/* ---- READY ------------------------------------------------------------------------ */

START_TEST(ready_after_link_up)
{
    int port = idle_port();
    char top[300];
    /* ready_timeout_s left at its default (30 s) */
    snprintf(top, sizeof top, "\"capture_dir\": \"%s\"", h_path(""));
    static struct h_daemon d;
    char *env[] = { "WATCHDOG_USEC=200000", NULL };
    h_daemon_spawn(&d, "kenaf-simd", top, robots_at(port), NULL, env, true);
    ck_assert_msg(h_notify_seen(&d, "STATUS=waiting for simulator links: kenaf", H_LONG_MS),
                  "no waiting STATUS: %s\n%s", d.notes, h_stderr(&d.proc));
    /* no READY while the simulator is away, but the watchdog is fed */
    ck_assert_msg(!h_notify_seen(&d, "READY=1", 1500), "READY before the link: %s", d.notes);
    ck_assert_int_ge(h_notify_count(&d, "WATCHDOG=1"), 3);

    static struct h_standin sim;
    h_standin_start(&sim, port, "sim", NULL);
    h_daemon_ready(&d);
    ck_assert_msg(h_notify_seen(&d, "1 simulator links up: kenaf@", H_LONG_MS), "%s", d.notes);
    ck_assert_double_eq(h_stat(&d, "robots_configured"), 1);
    /* READY came after the waiting STATUS, never before */
    const char *w = strstr(d.notes, "waiting for simulator links"), *r = strstr(d.notes, "READY=1");
    ck_assert(w && r && w < r);
}
END_TEST

START_TEST(ready_after_timeout)
{
    char top[300];
    snprintf(top, sizeof top, "\"ready_timeout_s\": 1.5, \"capture_dir\": \"%s\"", h_path(""));
    static struct h_daemon d;
    uint64_t t0 = h_now_us();
    h_daemon_spawn(&d, "kenaf-simd", top, robots_at(idle_port()), NULL, NULL, true);
    ck_assert_msg(h_notify_seen(&d, "READY=1", H_LONG_MS), "no READY: %s", h_stderr(&d.proc));
    uint64_t waited_ms = (h_now_us() - t0) / 1000;
    ck_assert_msg(waited_ms >= 1400, "READY after %llu ms, before ready_timeout_s",
                  (unsigned long long)waited_ms);
    ck_assert_msg(h_notify_seen(&d, "links down: kenaf", H_LONG_MS), "%s", d.notes);
    ck_assert_msg(h_log_count(d.proc.err_path, "passed with simulator links down: kenaf") == 1,
                  "no warning: %s", h_stderr(&d.proc));
    h_daemon_ready(&d); /* the stats answer with the robot bound */
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "socket-mode", socket_mode_exact, 60, NULL, NULL },
        { "capture-paths", capture_path_rules, 90, NULL, NULL },
        { "ready-link", ready_after_link_up, 60, NULL, NULL },
        { "ready-timeout", ready_after_timeout, 60, NULL, NULL },
        { "group-access", group_access, 90, NULL, NULL }, /* root only: last */
    };
    size_t n = sizeof cases / sizeof cases[0];
    if (geteuid() != 0) {
        /* group-access switches to other users (setpriv), which needs root */
        const char *only = getenv("CK_RUN_CASE");
        printf("daemon-service: group-access skipped: needs root to run clients as uids %d and "
               "%d\n",
               OPERATOR_UID, STRANGER_UID);
        if (only && !strcmp(only, "group-access"))
            return 77;
        n--; /* the last one */
    }
    return h_run_cases("daemon-service", cases, n);
}
