/* The documentation's runnable shell blocks, run as a user would run them.
 *
 *   test_docs SOURCE_ROOT BUILD_ROOT
 *
 * Every block marked "<!-- doctest -->" in README.md and docs/NAME.md
 * (doctest.h) is one test case. It runs as `sh -e` in a scratch directory
 * laid out like a checkout after README command 1: every top-level entry of
 * the source tree (config/, examples/, tools/, docs/, ...) linked in, out/
 * as the demo leaves it, and build/main linked to the build under test. So
 * a README that drifts from the code fails here, not in a user's hands.
 *
 * Each block gets a network namespace of its own with only loopback up (the
 * equivalent of `unshare --net` + `ip link set lo up`), so the documented
 * fixed ports (9750, 3000, 11345) never clash with anything else running;
 * XDG_RUNTIME_DIR inside the scratch directory, so the daemon's stats socket
 * lands there; a time limit; and its own process group, killed afterwards
 * with everything the block left running in the background. A block marked
 * needs=daemon runs after `build/main/daemon/kenaf-simd` (no flags) has
 * started and `kenaf-simd --wait-ready` has said it is up.
 *
 * Creating a network namespace needs root (CAP_SYS_ADMIN): without it the
 * test says so and is skipped (77). Under KN_WRAP (tools/run-valgrind) it
 * is skipped too: the documented commands run unwrapped, so repeating them
 * there would check nothing new. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "doctest.h"
#include "harness_net.h"
#include "harness_proc.h"
#include "harness_suite.h"

#define DEFAULT_TIMEOUT_S 120 /* a block without timeout=N */
#define READY_TIMEOUT_S 30    /* needs=daemon: kenaf-simd --wait-ready --timeout */
#define TAIL_BYTES 2000       /* of a failing block's output, in the message */

static const char *src_root, *build_root;
static struct kn_doctest_list blocks;

/* Environment a block must not inherit from whoever runs the tests: it
 * would point the documented commands somewhere else. */
static const char *const unset_vars[] = {
    "RUNTIME_DIRECTORY",        "KENAF_ROBOT",       "KENAF_TIMEOUT_MS",
    "KENAF_STATUS_MS",          "KENAF_DEBUG",       "KENAF_CONFIG_DIR",
    "KENAF_BUILD_DIR",          "KENAF_DEMO_PORT",   "KENAF_DEMO_OUT",
    "KENAF_GAZEBO_CONTROL_DIR", "GAZEBO_MASTER_URI", "GAZEBO_IP",
    "GAZEBO_HOSTNAME",          "KN_WRAP",           NULL,
};

/* ---- the scratch checkout ------------------------------------------------ */

static void make_dir(const char *path, mode_t mode)
{
    ck_assert_msg(mkdir(path, mode) == 0, "mkdir %s: %s", path, strerror(errno));
}

static void make_link(const char *target, const char *path)
{
    ck_assert_msg(symlink(target, path) == 0, "symlink %s -> %s: %s", path, target,
                  strerror(errno));
}

/* dir/ as a checkout looks after README command 1. */
static void lay_out_checkout(const char *dir)
{
    char from[4096], to[4096];
    DIR *d = opendir(src_root);
    ck_assert_msg(d != NULL, "%s: %s", src_root, strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        /* build/ and out/ are the user's own (made below); dot entries
         * (.git, .ci) are not what a block reads */
        if (e->d_name[0] == '.' || strcmp(e->d_name, "build") == 0 || strcmp(e->d_name, "out") == 0)
            continue;
        snprintf(from, sizeof from, "%s/%s", src_root, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        make_link(from, to);
    }
    closedir(d);
    snprintf(to, sizeof to, "%s/build", dir);
    make_dir(to, 0755);
    snprintf(to, sizeof to, "%s/build/main", dir);
    make_link(build_root, to);
    snprintf(to, sizeof to, "%s/out", dir);
    make_dir(to, 0755);
    snprintf(to, sizeof to, "%s/out/demo", dir);
    make_dir(to, 0755);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    fputs(text, f);
    ck_assert_msg(fclose(f) == 0, "%s: %s", path, strerror(errno));
}

/* ---- processes --------------------------------------------------------------- */

/* The leader of the block's process group: it only waits, so the group
 * lives as long as the test wants it, whatever the block starts and ends. */
static pid_t start_group(void)
{
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        for (;;)
            pause();
    }
    setpgid(pid, pid); /* either side may get there first */
    return pid;
}

/* Starts argv in the checkout `dir`, in process group `group`, stdin from
 * /dev/null, stdout and stderr appended to `out`. */
static pid_t start(const char *dir, pid_t group, char *const argv[], const char *out)
{
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        setpgid(0, group);
        /* the harness ignores SIGPIPE; a shell pipeline must not */
        signal(SIGPIPE, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        int in = open("/dev/null", O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (in < 0 || o < 0 || chdir(dir) < 0 || dup2(in, 0) < 0 || dup2(o, 1) < 0 ||
            dup2(o, 2) < 0)
            _exit(126);
        close(in);
        close(o);
        execvp(argv[0], argv);
        fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, group);
    return pid;
}

/* Waits for pid until timeout_s; its wait status, or -1 when it still runs. */
static int wait_for(pid_t pid, int timeout_s)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_s * 1000000u;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        ck_assert_msg(r == 0, "waitpid: %s", strerror(errno));
        if (h_now_us() >= end)
            return -1;
        h_sleep_ms(20);
    }
}

/* Everything in the group dies; the direct children are reaped. */
static void end_group(pid_t group, const pid_t *kids, int nkids)
{
    kill(-group, SIGKILL);
    waitpid(group, NULL, 0);
    for (int i = 0; i < nkids; i++)
        if (kids[i] > 0)
            waitpid(kids[i], NULL, 0);
}

/* "exited with status N" / "killed by signal N" / "still running ...". */
static const char *describe(int st, int timeout_s)
{
    static char buf[96];
    if (st == -1)
        snprintf(buf, sizeof buf, "still running after the time limit of %d s", timeout_s);
    else if (WIFEXITED(st))
        snprintf(buf, sizeof buf, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(buf, sizeof buf, "killed by signal %d", WTERMSIG(st));
    return buf;
}

/* The end of a file, for a failure message. */
static const char *tail_of(const char *path)
{
    static char buf[TAIL_BYTES + 1];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return buf;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size > TAIL_BYTES ? size - TAIL_BYTES : 0, SEEK_SET);
    size_t n = fread(buf, 1, TAIL_BYTES, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The whole output on stderr (the test log keeps it); the tail goes into
 * the failure message. */
static void show(const char *label, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    fprintf(stderr, "---- %s ----\n", label);
    char line[4096];
    while (fgets(line, sizeof line, f))
        fputs(line, stderr);
    fprintf(stderr, "---- end of %s ----\n", label);
    fclose(f);
}

/* ---- one block ------------------------------------------------------------- */

static void prepare_env(const char *runtime_dir)
{
    for (int i = 0; unset_vars[i]; i++)
        unsetenv(unset_vars[i]);
    setenv("XDG_RUNTIME_DIR", runtime_dir, 1);
#if defined(__SANITIZE_ADDRESS__)
    /* In a sanitized build `build/main` is that build: a block that builds
     * a controller with plain `cc` against its libkenaf.so.1 gets a program
     * that loads the ASan runtime only through the library, which ASan
     * refuses by default. The block stays as a user types it; the runtime
     * is told to accept the late load. */
    const char *asan = getenv("ASAN_OPTIONS");
    char opts[1024];
    snprintf(opts, sizeof opts, "%s%sverify_asan_link_order=0", asan ? asan : "",
             asan && *asan ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
#endif
}

START_TEST(run_block)
{
    const struct kn_doctest_block *b = &blocks.v[_i];
    int timeout_s = b->timeout_s ? b->timeout_s : DEFAULT_TIMEOUT_S;
    fprintf(stderr, "==== %s:%d%s\n", b->file, b->line, b->needs_daemon ? " (needs=daemon)" : "");

    char dir[256], runtime[256], script[256], out[256], dlog[256];
    snprintf(dir, sizeof dir, "%s", h_path("checkout"));
    snprintf(runtime, sizeof runtime, "%s", h_path("run"));
    snprintf(script, sizeof script, "%s", h_path("block.sh"));
    snprintf(out, sizeof out, "%s", h_path("block.out"));
    snprintf(dlog, sizeof dlog, "%s", h_path("daemon.log"));
    make_dir(dir, 0755);
    make_dir(runtime, 0700);
    lay_out_checkout(dir);
    write_text(script, b->text);
    prepare_env(runtime);

    h_private_net();

    pid_t group = start_group();
    pid_t kids[3] = { 0, 0, 0 };
    if (b->needs_daemon) {
        char *daemon[] = { "build/main/daemon/kenaf-simd", NULL };
        kids[0] = start(dir, group, daemon, dlog);
        char timeout[16];
        snprintf(timeout, sizeof timeout, "%d", READY_TIMEOUT_S);
        char *ready[] = { "build/main/daemon/kenaf-simd", "--wait-ready", "--timeout", timeout,
                          NULL };
        kids[1] = start(dir, group, ready, dlog);
        int st = wait_for(kids[1], READY_TIMEOUT_S + 10);
        if (st != 0) {
            kids[1] = st == -1 ? kids[1] : 0;
            end_group(group, kids, 3);
            show("kenaf-simd and --wait-ready", dlog);
            ck_abort_msg("%s:%d: needs=daemon: `kenaf-simd --wait-ready` %s; kenaf-simd's "
                         "output ends:\n%s",
                         b->file, b->line, describe(st, READY_TIMEOUT_S + 10), tail_of(dlog));
        }
        kids[1] = 0;
    }
    char *sh[] = { "sh", "-e", script, NULL };
    kids[2] = start(dir, group, sh, out);
    int st = wait_for(kids[2], timeout_s);
    if (st != -1)
        kids[2] = 0;
    end_group(group, kids, 3);

    if (st != 0) {
        show("block output", out);
        if (b->needs_daemon)
            show("kenaf-simd", dlog);
        ck_abort_msg("%s:%d: the block %s; its output ends:\n%s", b->file, b->line,
                     describe(st, timeout_s), tail_of(out));
    }
}
END_TEST

/* ---- finding the blocks ---------------------------------------------------- */

static int md_file(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && strcmp(e->d_name + n - 3, ".md") == 0;
}

/* README.md, then the .md files of docs/ in name order. */
static int find_blocks(char *err, size_t errlen)
{
    char path[4096], name[512];
    snprintf(path, sizeof path, "%s/README.md", src_root);
    if (kn_doctest_extract_file(path, "README.md", &blocks, err, errlen) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/docs", src_root);
    struct dirent **list;
    int n = scandir(path, &list, md_file, alphasort);
    if (n < 0) {
        snprintf(err, errlen, "%.512s: %s", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/docs/%s", src_root, list[i]->d_name);
        snprintf(name, sizeof name, "docs/%s", list[i]->d_name);
        if (rc == 0 && kn_doctest_extract_file(path, name, &blocks, err, errlen) < 0)
            rc = -1;
        free(list[i]);
    }
    free(list);
    if (rc == 0 && blocks.n == 0) {
        snprintf(err, errlen, "no runnable blocks in README.md or docs/");
        rc = -1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_docs SOURCE_ROOT BUILD_ROOT\n");
        return 2;
    }
    src_root = argv[1];
    build_root = argv[2];
    char err[1024];
    if (find_blocks(err, sizeof err) < 0) {
        fprintf(stderr, "docs: %s\n", err);
        return EXIT_FAILURE;
    }
    int max_timeout = DEFAULT_TIMEOUT_S;
    fprintf(stderr, "docs: %zu runnable blocks:", blocks.n);
    for (size_t i = 0; i < blocks.n; i++) {
        fprintf(stderr, " %s:%d", blocks.v[i].file, blocks.v[i].line);
        if (blocks.v[i].timeout_s > max_timeout)
            max_timeout = blocks.v[i].timeout_s;
    }
    fprintf(stderr, "\n");
    if (h_wrapped()) {
        fprintf(stderr, "docs: SKIPPED: the documented commands run unwrapped; KN_WRAP would "
                        "only repeat them\n");
        return 77;
    }
    int e = h_private_net_errno();
    if (e) {
        fprintf(stderr,
                "docs: SKIPPED: each block needs a network namespace of its own (the "
                "documented ports are fixed), and unshare(CLONE_NEWNET) failed: %s; "
                "run the tests as root\n",
                strerror(e));
        return 77;
    }
    Suite *s = suite_create("docs");
    TCase *tc = tcase_create("blocks");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_set_timeout(tc, max_timeout + READY_TIMEOUT_S + 60);
    tcase_add_loop_test(tc, run_block, 0, (int)blocks.n);
    suite_add_tcase(s, tc);
    int rc = h_run_suite(s);
    kn_doctest_free(&blocks);
    return rc;
}
