/* kenaf-simd with no flags, as a newcomer runs it from the checkout: a
 * working directory with ./config (the source tree's) and the build's
 * kenaf-simd, once as root and once as an ordinary user (uid 65534, no
 * HOME, no XDG_RUNTIME_DIR: the /tmp/kenaf-simd-<uid> fallback). Each run
 * must load ./config/kenaf-simd.json, spawn the built engine, answer a
 * KRP/1 HELLO on 127.0.0.1:9750 with HELLO_ACK, bring the simulator link
 * up (kenaf-simd --wait-ready), stay up 2 s, answer on its stats socket in
 * the default place (a directory it made, mode 0700), and stop cleanly.
 *
 * Port 9750 is fixed by the shipped config, and the default socket places
 * are shared by everything on the machine: each run has a network
 * namespace of its own (unshare(2), loopback brought up here) and a mount
 * namespace with an empty /run (root) or /tmp (the user) made by
 * unshare(1), so it meets neither another test nor a user's daemon. The
 * test reaches the socket through /proc/PID/root. Needs root and
 * namespaces; exits 77 (skipped) with the reason otherwise. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "harness.h"

#define KRP_PORT 9750 /* config/kenaf-simd.json */
#define NOBODY 65534

/* The checkout's layout: ./config is the source tree's. */
static const char *make_checkout(void)
{
    static char dir[256];
    snprintf(dir, sizeof dir, "%s", h_path("checkout"));
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    char link[300];
    snprintf(link, sizeof link, "%s/config", dir);
    ck_assert_int_eq(symlink(KN_SOURCE_ROOT "/config", link), 0);
    return dir;
}

/* Starts `kenaf-simd` without flags in dir, in a mount namespace where
 * `fresh` is an empty tmpfs, as root or as uid 65534. What the run needs
 * from under `fresh` (a checkout or build tree in /tmp, as a CI clone may
 * be) is bound back into the new tmpfs at its own path, through the old
 * `fresh` held at /mnt for the moment. */
static void start_simd(struct h_proc *p, const char *dir, const char *fresh, bool as_root)
{
    static const char script[] =
        "set -e; fresh=$1 mode=$2; shift 2\n"
        "mount --bind \"$fresh\" /mnt\n"
        "mount -t tmpfs -o mode=\"$mode\" kn-test \"$fresh\"\n"
        "while [ \"$1\" != -- ]; do\n"
        "  case $1 in \"$fresh\"/*) mkdir -p \"$1\"; mount --bind \"/mnt${1#\"$fresh\"}\" \"$1\";; esac\n"
        "  shift\n"
        "done\n"
        "shift; umount -l /mnt; exec \"$@\"\n";
    /* the trees the run reads: the daemon's build tree (it finds
     * kenaf-engine there), the source tree (config/) and the checkout */
    static char build_root[512];
    const char *simd = getenv("KN_SIMD");
    ck_assert_msg(simd != NULL, "KN_SIMD not set");
    snprintf(build_root, sizeof build_root, "%s", simd);
    for (int up = 0; up < 2; up++) { /* <build>/daemon/kenaf-simd */
        char *slash = strrchr(build_root, '/');
        ck_assert_ptr_nonnull(slash);
        *slash = '\0';
    }
    char *argv[48];
    int n = 0;
    argv[n++] = (char *)h_which("unshare");
    argv[n++] = "--mount";
    argv[n++] = "--propagation";
    argv[n++] = "private";
    argv[n++] = "sh";
    argv[n++] = "-c";
    argv[n++] = (char *)script;
    argv[n++] = "sh";
    argv[n++] = (char *)fresh;
    argv[n++] = as_root ? "0755" : "1777";
    argv[n++] = build_root;
    argv[n++] = KN_SOURCE_ROOT;
    argv[n++] = (char *)dir;
    argv[n++] = "--";
    argv[n++] = "env";
    static const char *const unset[] = {
        "HOME",          "XDG_RUNTIME_DIR", "RUNTIME_DIRECTORY", "KENAF_CONFIG_DIR",
        "NOTIFY_SOCKET", "JOURNAL_STREAM",  "LISTEN_FDS"
    };
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++) {
        argv[n++] = "-u";
        argv[n++] = (char *)unset[i];
    }
    if (!as_root) {
        argv[n++] = "setpriv";
        argv[n++] = "--reuid=65534";
        argv[n++] = "--regid=65534";
        argv[n++] = "--clear-groups";
        argv[n++] = "--inh-caps=-all";
    }
    argv[n++] = (char *)simd;
    argv[n] = NULL;
    char here[512];
    ck_assert_ptr_nonnull(getcwd(here, sizeof here));
    ck_assert_int_eq(chdir(dir), 0); /* the child starts there */
    h_spawn(p, argv, NULL, "simd.stderr");
    ck_assert_int_eq(chdir(here), 0);
}

static void wait_for_socket(struct h_proc *p, const char *sock)
{
    uint64_t end = h_now_us() + (uint64_t)H_LONG_MS * 1000;
    struct stat st;
    while (lstat(sock, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        ck_assert_msg(h_wait_exit(p, 0) == -1, "kenaf-simd exited:\n%s", h_stderr(p));
        ck_assert_msg(h_now_us() < end, "no stats socket at %s:\n%s", sock, h_stderr(p));
        h_sleep_ms(50);
    }
}

static void expect_hello_ack(struct h_proc *p)
{
    struct h_udp u;
    h_udp_open(&u, KRP_PORT);
    struct kn_krp_msg m;
    bool got = false;
    for (int i = 0; i < 20 && !got; i++) {
        h_hello(&u, "defaults");
        got = h_udp_recv(&u, &m, 500);
    }
    ck_assert_msg(got, "no answer to HELLO on 127.0.0.1:%d:\n%s", KRP_PORT, h_stderr(p));
    ck_assert_msg(m.h.type == KN_KRP_HELLO_ACK, "HELLO answered with type 0x%02x", m.h.type);
    h_udp_close(&u);
}

/* The whole stats document from the socket. */
static cJSON *read_stats(const char *sock, struct h_proc *p)
{
    int fd = h_unix_stream_connect(sock);
    ck_assert_msg(fd >= 0, "cannot connect to %s:\n%s", sock, h_stderr(p));
    static char buf[1 << 18];
    size_t len = 0;
    uint64_t end = h_now_us() + 5000000;
    while (len < sizeof buf - 1 && h_wait_readable(fd, end)) {
        ssize_t k = read(fd, buf + len, sizeof buf - 1 - len);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    close(fd);
    buf[len] = '\0';
    cJSON *doc = cJSON_Parse(buf);
    ck_assert_msg(doc != NULL, "the stats socket answered no JSON: %.200s", buf);
    return doc;
}

static int run_wait_ready(const char *sock)
{
    static struct h_proc w;
    char *argv[] = { getenv("KN_SIMD"), "--wait-ready", "--timeout", "10",
                     "--socket",        (char *)sock,   NULL };
    h_spawn(&w, argv, NULL, "wait-ready.stderr");
    int st = h_wait_exit(&w, 15000);
    ck_assert_msg(st != -1 && WIFEXITED(st), "kenaf-simd --wait-ready did not finish");
    if (WEXITSTATUS(st) != 0)
        ck_abort_msg("kenaf-simd --wait-ready: %s", h_stderr(&w));
    return 0;
}

static void defaults_run(bool as_root)
{
    h_private_net();
    const char *dir = make_checkout();
    /* where a fresh machine puts the socket for this user */
    const char *fresh = as_root ? "/run" : "/tmp";
    char sockdir[64];
    if (as_root)
        snprintf(sockdir, sizeof sockdir, "/run/kenaf-simd");
    else
        snprintf(sockdir, sizeof sockdir, "/tmp/kenaf-simd-%d", NOBODY);
    static struct h_proc p;
    start_simd(&p, dir, fresh, as_root);

    char sock[200], sdir[160];
    snprintf(sdir, sizeof sdir, "/proc/%d/root%s", (int)p.pid, sockdir);
    snprintf(sock, sizeof sock, "%s/stats.sock", sdir);
    wait_for_socket(&p, sock);
    struct stat st;
    ck_assert_int_eq(lstat(sdir, &st), 0);
    ck_assert_msg((st.st_mode & 0777) == 0700, "%s has mode %o", sockdir, st.st_mode & 0777);
    ck_assert_uint_eq(st.st_uid, as_root ? 0u : (unsigned)NOBODY);

    expect_hello_ack(&p);
    run_wait_ready(sock);

    h_sleep_ms(2000);
    ck_assert_msg(h_wait_exit(&p, 0) == -1, "kenaf-simd did not stay up:\n%s", h_stderr(&p));
    cJSON *doc = read_stats(sock, &p);
    const cJSON *cfgpath = cJSON_GetObjectItemCaseSensitive(doc, "config");
    ck_assert_msg(cJSON_IsString(cfgpath) &&
                      strcmp(cfgpath->valuestring, "config/kenaf-simd.json") == 0,
                  "not the checkout's config");
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(doc, "robots"), 0);
    const cJSON *up = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(r0, "flags"), "BACKEND_UP");
    ck_assert_msg(cJSON_IsTrue(up), "robot kenaf's simulator link is not up:\n%s", h_stderr(&p));
    cJSON_Delete(doc);
    expect_hello_ack(&p); /* still answering */

    h_signal(&p, SIGINT);
    int status = h_wait_exit(&p, H_LONG_MS);
    ck_assert_msg(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "kenaf-simd did not stop cleanly:\n%s", h_stderr(&p));
}

START_TEST(as_root)
{
    defaults_run(true);
}
END_TEST

START_TEST(as_user)
{
    defaults_run(false);
}
END_TEST

/* Why this machine cannot run the test, or NULL. */
static const char *cannot_run(void)
{
    static char why[300];
    if (geteuid() != 0)
        return "needs root (network and mount namespaces, a second uid)";
    const char *tools[] = { "unshare", "setpriv", "mount", "env", "sh" };
    for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
        if (!h_which(tools[i])) {
            snprintf(why, sizeof why, "%s is not installed (util-linux)", tools[i]);
            return why;
        }
    const char *installed = getenv("KN_INSTALLED_CONFIG");
    if (installed && access(installed, F_OK) == 0) {
        snprintf(why, sizeof why,
                 "%s exists: kenaf-simd without flags would read it instead of "
                 "./config",
                 installed);
        return why;
    }
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWNET | CLONE_NEWNS) == 0 ? 0 : errno);
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(why, sizeof why, "no network/mount namespaces here (unshare: %s)",
                 pid > 0 && WIFEXITED(st) ? strerror(WEXITSTATUS(st)) : "failed");
        return why;
    }
    return NULL;
}

int main(void)
{
    const char *why = cannot_run();
    if (why) {
        printf("daemon-defaults: skipped: %s\n", why);
        return 77;
    }
    const struct h_case cases[] = {
        { "as_root", as_root, 60, NULL, NULL },
        { "as_user", as_user, 60, NULL, NULL },
    };
    return h_run_cases("daemon-defaults", cases, sizeof cases / sizeof cases[0]);
}
