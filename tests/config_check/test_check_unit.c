/* Unit tests of what kenaf-simd checks at start-up besides the config
 * file: the stats socket's default place and its directory (sockdir.h),
 * the spawned engine's terrain and robot files (engine_files.h), the
 * socket's group, the capture directory's default (capdir.h), and the
 * checker over a loaded config (config_check.h), with the owner and mode
 * rule for the config file and the engine program (filetrust.h). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "capdir.h"
#include "config_check.h"
#include "engine_files.h"
#include "engine_limits.h"
#include "harness_proc.h"
#include "harness_suite.h"
#include "sockdir.h"

#define SRC_CONFIG KN_SOURCE_ROOT "/config"

static char err[16384];

static void clear_env(void)
{
    unsetenv("RUNTIME_DIRECTORY");
    unsetenv("XDG_RUNTIME_DIR");
    unsetenv("KENAF_CONFIG_DIR");
}

/* ---- the default place --------------------------------------------------- */

START_TEST(default_follows_the_environment)
{
    char p[108];
    clear_env();
    setenv("RUNTIME_DIRECTORY", "/run/kenaf-simd:/run/other", 1);
    setenv("XDG_RUNTIME_DIR", "/run/user/1000", 1);
    ck_assert_int_eq(kn_sockdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, "/run/kenaf-simd/stats.sock"); /* the unit's first directory */

    unsetenv("RUNTIME_DIRECTORY");
    ck_assert_int_eq(kn_sockdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, "/run/user/1000/kenaf-simd/stats.sock");

    setenv("XDG_RUNTIME_DIR", "", 1); /* empty is unset */
    ck_assert_int_eq(kn_sockdir_default(p, sizeof p), 0);
    char want[108];
    if (geteuid() == 0)
        snprintf(want, sizeof want, "/run/kenaf-simd/stats.sock");
    else
        snprintf(want, sizeof want, "/tmp/kenaf-simd-%u/stats.sock", (unsigned)geteuid());
    ck_assert_str_eq(p, want);

    /* a runtime directory too long for sun_path falls through */
    char longdir[200];
    memset(longdir, 'x', sizeof longdir - 1);
    longdir[0] = '/';
    longdir[sizeof longdir - 1] = '\0';
    setenv("XDG_RUNTIME_DIR", longdir, 1);
    ck_assert_int_eq(kn_sockdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, want);
    ck_assert_int_eq(kn_sockdir_default(p, 10), -1);
    clear_env();
}
END_TEST

START_TEST(client_candidates_in_order)
{
    char c[KN_SOCKDIR_MAX_CANDIDATES][108];
    clear_env();
    setenv("RUNTIME_DIRECTORY", "/run/a", 1);
    setenv("XDG_RUNTIME_DIR", "/run/user/7", 1);
    ck_assert_uint_eq(kn_sockdir_candidates(c, KN_SOCKDIR_MAX_CANDIDATES), 4);
    ck_assert_str_eq(c[0], "/run/a/stats.sock");
    ck_assert_str_eq(c[1], "/run/user/7/kenaf-simd/stats.sock");
    ck_assert_str_eq(c[2], "/run/kenaf-simd/stats.sock"); /* whatever the uid */
    char tmp[108];
    snprintf(tmp, sizeof tmp, "/tmp/kenaf-simd-%u/stats.sock", (unsigned)geteuid());
    ck_assert_str_eq(c[3], tmp);
    clear_env();
    ck_assert_uint_eq(kn_sockdir_candidates(c, KN_SOCKDIR_MAX_CANDIDATES), 2);
    ck_assert_uint_eq(kn_sockdir_candidates(c, 1), 1);
}
END_TEST

/* ---- the directory ----------------------------------------------------------- */

START_TEST(missing_directory_is_created_0700)
{
    char sock[256];
    snprintf(sock, sizeof sock, "%s", h_path("sub/stats.sock"));
    /* without create: the directory could be made, so it is usable */
    ck_assert_int_eq(kn_sockdir_prepare(sock, false, err, sizeof err), 0);
    ck_assert_int_ne(access(h_path("sub"), F_OK), 0);
    ck_assert_int_eq(kn_sockdir_prepare(sock, true, err, sizeof err), 0);
    struct stat st;
    ck_assert_int_eq(stat(h_path("sub"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0700);
    /* again: it is there now */
    ck_assert_int_eq(kn_sockdir_prepare(sock, true, err, sizeof err), 0);
}
END_TEST

START_TEST(directory_problems_name_their_cause)
{
    char sock[256];
    /* the parent of the directory is missing: one level only is made */
    snprintf(sock, sizeof sock, "%s", h_path("no/such/stats.sock"));
    ck_assert_int_eq(kn_sockdir_prepare(sock, true, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/no/such: cannot be created: No such file or directory"), "%s", err);
    ck_assert_int_eq(kn_sockdir_prepare(sock, false, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/no/such: cannot be created: ") &&
                      strstr(err, "/no: No such file or directory"),
                  "%s", err);

    /* the directory is a file */
    h_write_file(h_path("file"), "x");
    snprintf(sock, sizeof sock, "%s", h_path("file/stats.sock"));
    ck_assert_int_eq(kn_sockdir_prepare(sock, true, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "Not a directory"), "%s", err);

    /* the socket path is taken by a file */
    snprintf(sock, sizeof sock, "%s", h_path("file"));
    ck_assert_int_eq(kn_sockdir_prepare(sock, true, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "exists and is not a socket"), "%s", err);

    /* longer than sun_path */
    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[0] = '/';
    longp[sizeof longp - 1] = '\0';
    ck_assert_int_eq(kn_sockdir_prepare(longp, true, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "path too long for a Unix socket"), "%s", err);
}
END_TEST

/* In a child with another uid: prepare the default /tmp place. */
static int tmp_prepare_as(uid_t uid)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
            _exit(90);
        char sock[108], e[600];
        snprintf(sock, sizeof sock, "/tmp/kenaf-simd-%u/stats.sock", (unsigned)uid);
        int rc = kn_sockdir_prepare(sock, true, e, sizeof e);
        fprintf(stderr, "uid %u: %s\n", (unsigned)uid, rc ? e : "usable");
        _exit(rc == 0                          ? 0
              : strstr(e, "owned by uid")      ? 1
              : strstr(e, "writable by group") ? 2
              : strstr(e, "symbolic link")     ? 3
                                               : 4);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* Anyone can make /tmp/kenaf-simd-<uid> first: only our own private
 * directory is used. */
START_TEST(tmp_fallback_must_be_ours)
{
    if (geteuid() != 0) {
        printf("tmp_fallback_must_be_ours: needs root to act as another uid; not run\n");
        return;
    }
    const uid_t uid = 4242421; /* nobody's */
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/kenaf-simd-%u", (unsigned)uid);
    h_remove_tree(dir);
    ck_assert_int_eq(tmp_prepare_as(uid), 0); /* made by us */
    struct stat st;
    ck_assert_int_eq(lstat(dir, &st), 0);
    ck_assert_uint_eq(st.st_uid, uid);
    ck_assert_uint_eq(st.st_mode & 0777, 0700);

    ck_assert_int_eq(chmod(dir, 0777), 0);
    ck_assert_int_eq(tmp_prepare_as(uid), 2);
    ck_assert_int_eq(chmod(dir, 0700), 0);
    ck_assert_int_eq(chown(dir, 0, 0), 0);
    ck_assert_int_eq(tmp_prepare_as(uid), 1);
    ck_assert_int_eq(rmdir(dir), 0);
    ck_assert_int_eq(symlink(h_path("."), dir), 0);
    ck_assert_int_eq(tmp_prepare_as(uid), 3);
    ck_assert_int_eq(unlink(dir), 0);
}
END_TEST

/* ---- the engine's files --------------------------------------------------------- */

START_TEST(engine_files_resolve_and_load)
{
    char dir[512], path[1024], why[900], names[300];
    clear_env();
    setenv("KENAF_CONFIG_DIR", SRC_CONFIG, 1);
    kn_engfiles_dir("/nonexistent/kenaf-engine", dir, sizeof dir);
    ck_assert_str_eq(dir, SRC_CONFIG);
    unsetenv("KENAF_CONFIG_DIR");

    ck_assert_int_eq(
        kn_engfiles_path(KN_ENGFILES_TERRAIN, dir, "flat", path, sizeof path, why, sizeof why), 0);
    ck_assert_str_eq(path, SRC_CONFIG "/terrains/flat.json");
    ck_assert_int_eq(kn_engfiles_check(KN_ENGFILES_TERRAIN, path, why, sizeof why), 0);
    ck_assert_int_eq(
        kn_engfiles_path(KN_ENGFILES_ROBOT, dir, "kenaf", path, sizeof path, why, sizeof why), 0);
    ck_assert_str_eq(path, SRC_CONFIG "/robots/kenaf.json");
    ck_assert_int_eq(kn_engfiles_check(KN_ENGFILES_ROBOT, path, why, sizeof why), 0);
    /* a file: as given */
    ck_assert_int_eq(kn_engfiles_path(KN_ENGFILES_TERRAIN, dir, "my/step.json", path, sizeof path,
                                      why, sizeof why),
                     0);
    ck_assert_str_eq(path, "my/step.json");
    ck_assert_int_eq(
        kn_engfiles_path(KN_ENGFILES_TERRAIN, dir, "step.json", path, sizeof path, why, sizeof why),
        0);
    ck_assert_str_eq(path, "step.json");

    /* the engine's own messages */
    kn_engfiles_path(KN_ENGFILES_TERRAIN, dir, "moon", path, sizeof path, why, sizeof why);
    ck_assert_int_eq(kn_engfiles_check(KN_ENGFILES_TERRAIN, path, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "/terrains/moon.json: No such file or directory"), "%s", why);
    h_write_file(h_path("bad-terrain.json"), "{\"type\": \"crater\"}");
    ck_assert_int_eq(
        kn_engfiles_check(KN_ENGFILES_TERRAIN, h_path("bad-terrain.json"), why, sizeof why), -1);
    ck_assert_msg(strstr(why, "\"type\" must be one of"), "%s", why);
    h_write_file(h_path("bad-robot.json"), "{\"name\": ");
    ck_assert_int_eq(
        kn_engfiles_check(KN_ENGFILES_ROBOT, h_path("bad-robot.json"), why, sizeof why), -1);
    ck_assert_msg(strstr(why, "bad-robot.json"), "%s", why);

    kn_engfiles_names(KN_ENGFILES_TERRAIN, dir, names, sizeof names);
    ck_assert_msg(strstr(names, "flat") && strstr(names, "stairs"), "%s", names);
    kn_engfiles_names(KN_ENGFILES_ROBOT, h_path("none"), names, sizeof names);
    ck_assert_str_eq(names, "");
}
END_TEST

/* ---- the checker ---------------------------------------------------------------- */

static struct kn_config *load_text(const char *text)
{
    h_write_file(h_path("c.json"), text);
    struct kn_config *cfg = calloc(1, sizeof *cfg);
    ck_assert_ptr_nonnull(cfg);
    size_t n = kn_config_load_all(h_path("c.json"), NULL, cfg, err, sizeof err);
    ck_assert_msg(n == 0, "loads: %s", err);
    return cfg;
}

START_TEST(checker_finds_what_start_up_would)
{
    clear_env();
    char text[2048];
    snprintf(text, sizeof text,
             "{\"stats_socket\": \"%s\", \"robots\": ["
             "{\"name\": \"a\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\"}},"
             "{\"name\": \"b\", \"listen\": \"192.0.2.1:9750\","
             " \"backend\": {\"type\": \"gazebo\", \"address\": \"x.invalid\"}},"
             "{\"name\": \"c\", \"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\","
             " \"engine\": {\"terrain\": \"moon\", \"path\": \"%s\"}}}]}",
             h_path("no/dir/s.sock"), h_path("no-engine"));
    struct kn_config *cfg = load_text(text);
    err[0] = '\0';
    size_t n = kn_cfgcheck_run(cfg, err, sizeof err);
    ck_assert_msg(n == 5, "expected 5 problems, got %zu:\n%s", n, err);
    const char *want[] = {
        ": $.stats_socket: expected a socket path in a directory kenaf-simd can use, got \"",
        ": $.robots[1].listen: expected an address of this host, got \"192.0.2.1:9750\" "
        "(Cannot assign requested address)",
        ": $.robots[1].backend.address: expected a simulator host name that resolves, got "
        "\"x.invalid\"",
        ": $.robots[2].backend.engine.path: expected an executable kenaf-engine, got \"",
        ": $.robots[2].backend.engine.terrain: expected a terrain kenaf-engine can load",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(err, want[i]), "expected\n  %s\nin\n%s", want[i], err);
    /* robot a: the built engine, flat, kenaf: nothing to say */
    ck_assert_ptr_null(strstr(err, "$.robots[0]"));
    free(cfg);
}
END_TEST

/* A config of n_flat robots in the spawned engine on flat ground, then
 * n_addr in the engine at 127.0.0.1:3999 and n_stairs in a spawned engine
 * on the stairs: three engine worlds. */
static struct kn_config *fleet_config(int n_flat, int n_addr, int n_stairs)
{
    static char text[32768];
    size_t len = (size_t)snprintf(text, sizeof text, "{\"robots\": [");
    for (int i = 0; i < n_flat + n_addr + n_stairs; i++) {
        const char *be = i < n_flat            ? "{\"type\": \"engine\"}"
                         : i < n_flat + n_addr ? "{\"type\": \"engine\", \"address\": "
                                                 "\"127.0.0.1:3999\"}"
                                               : "{\"type\": \"engine\", \"engine\": "
                                                 "{\"terrain\": \"stairs\"}}";
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "%s{\"name\": \"r%d\", \"listen\": \"127.0.0.1:0\", "
                                "\"backend\": %s}",
                                i ? "," : "", i, be);
        ck_assert_uint_lt(len, sizeof text);
    }
    snprintf(text + len, sizeof text - len, "]}");
    return load_text(text);
}

START_TEST(engine_world_capacity)
{
    clear_env();
    /* the limit exactly, in each world: fine */
    struct kn_config *cfg = fleet_config(KN_ENGINE_MAX_ROBOTS, 5, 5);
    err[0] = '\0';
    size_t n = kn_cfgcheck_run(cfg, err, sizeof err);
    ck_assert_msg(n == 0, "%s", err);
    free(cfg);
    /* one robot too many on flat, said once at the first robot beyond it */
    cfg = fleet_config(KN_ENGINE_MAX_ROBOTS + 2, 5, 5);
    err[0] = '\0';
    n = kn_cfgcheck_run(cfg, err, sizeof err);
    ck_assert_msg(n == 1, "expected 1 problem, got %zu:\n%s", n, err);
    char want[256];
    snprintf(want, sizeof want,
             ": $.robots[%d]: expected at most %d robots in one engine world "
             "(KN_ENGINE_MAX_ROBOTS: what one core steps at real time), got %d in the world of "
             "robot r0 (a spawned engine)",
             KN_ENGINE_MAX_ROBOTS, KN_ENGINE_MAX_ROBOTS, KN_ENGINE_MAX_ROBOTS + 2);
    ck_assert_msg(strstr(err, want), "expected\n  %s\nin\n%s", want, err);
    free(cfg);
    /* and at an address */
    cfg = fleet_config(2, KN_ENGINE_MAX_ROBOTS + 1, 0);
    err[0] = '\0';
    n = kn_cfgcheck_run(cfg, err, sizeof err);
    ck_assert_msg(n == 1, "expected 1 problem, got %zu:\n%s", n, err);
    snprintf(want, sizeof want, "got %d in the world of robot r2 (the engine at its address)",
             KN_ENGINE_MAX_ROBOTS + 1);
    ck_assert_msg(strstr(err, want), "expected\n  %s\nin\n%s", want, err);
    free(cfg);
}
END_TEST

/* ---- files kenaf-simd trusts: the config, the engine it runs ---------------- */

/* The problems of the config in c.json after chmod(mode) and, when uid is
 * not -1, chown to uid. */
static const char *check_with(const char *file, mode_t mode, uid_t uid, const char *text)
{
    struct kn_config *cfg = load_text(text);
    ck_assert_int_eq(chmod(file, mode), 0);
    if (uid != (uid_t)-1)
        ck_assert_int_eq(chown(file, uid, (gid_t)-1), 0);
    free(cfg);
    cfg = calloc(1, sizeof *cfg);
    ck_assert_ptr_nonnull(cfg);
    err[0] = '\0';
    size_t n = kn_config_load_all(h_path("c.json"), NULL, cfg, err, sizeof err);
    n += kn_cfgcheck_run(cfg, err, sizeof err);
    free(cfg);
    return n ? err : "";
}

START_TEST(config_file_must_be_trusted)
{
    clear_env();
    char text[1024], want[200];
    snprintf(text, sizeof text,
             "{\"stats_socket\": \"\", \"robots\": [{\"name\": \"a\", "
             "\"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"usarsim\"}}]}");
    const char *c = h_path("c.json");
    ck_assert_str_eq(check_with(c, 0644, (uid_t)-1, text), ""); /* ours, 0644 */
    ck_assert_str_eq(check_with(c, 0600, (uid_t)-1, text), "");
    ck_assert_str_eq(check_with(c, 0444, (uid_t)-1, text), "");
    snprintf(want, sizeof want, "c.json: expected a config file owned by root");
    const char *e = check_with(c, 0666, (uid_t)-1, text);
    ck_assert_msg(strstr(e, want) && strstr(e, "mode 0666 (writable by group and others)"), "%s",
                  e);
    e = check_with(c, 0664, (uid_t)-1, text);
    ck_assert_msg(strstr(e, "mode 0664 (writable by group)"), "%s", e);
    e = check_with(c, 0646, (uid_t)-1, text);
    ck_assert_msg(strstr(e, "mode 0646 (writable by others)"), "%s", e);
    if (geteuid() != 0)
        return; /* only root can give a file away */
    e = check_with(c, 0644, 4321, text);
    ck_assert_msg(strstr(e, "got owner uid 4321 (neither root nor uid 0), mode 0644"), "%s", e);
    ck_assert_str_eq(check_with(c, 0644, 0, text), "");
}
END_TEST

START_TEST(engine_program_must_be_trusted)
{
    clear_env();
    const char *exe = h_path("eng");
    h_write_file(exe, "#!/bin/sh\nexit 1\n");
    char text[1024];
    snprintf(text, sizeof text,
             "{\"stats_socket\": \"\", \"robots\": [{\"name\": \"a\", "
             "\"listen\": \"127.0.0.1:0\", \"backend\": {\"type\": \"engine\", \"engine\": "
             "{\"path\": \"%s\"}}}]}",
             exe);
    struct kn_config *cfg = load_text(text);
    const mode_t modes[] = { 0755, 0775, 0757, 0777 };
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        ck_assert_int_eq(chmod(exe, modes[i]), 0);
        err[0] = '\0';
        kn_cfgcheck_run(cfg, err, sizeof err);
        bool refused = strstr(err, "$.robots[0].backend.engine.path: expected a kenaf-engine "
                                   "executable owned by root") != NULL;
        ck_assert_msg(refused == (modes[i] != 0755), "mode %04o:\n%s", (unsigned)modes[i], err);
        if (refused)
            ck_assert_msg(strstr(err, "writable by"), "%s", err);
    }
    if (geteuid() == 0) {
        ck_assert_int_eq(chmod(exe, 0755), 0);
        ck_assert_int_eq(chown(exe, 4321, (gid_t)-1), 0);
        err[0] = '\0';
        kn_cfgcheck_run(cfg, err, sizeof err);
        ck_assert_msg(strstr(err, "(owner uid 4321 (neither root nor uid 0), mode 0755)"), "%s",
                      err);
    }
    free(cfg);
}
END_TEST

/* ---- the socket's group and the capture directory ------------------------ */

START_TEST(socket_group_is_resolved)
{
    gid_t g;
    ck_assert_int_eq(kn_sockdir_group("", &g, err, sizeof err), 0);
    ck_assert_uint_eq(g, (gid_t)-1); /* our own: nothing to change */
    ck_assert_int_eq(kn_sockdir_group("4242", &g, err, sizeof err), 0);
    ck_assert_uint_eq(g, 4242); /* a number need not be in the group database */
    ck_assert_int_eq(kn_sockdir_group("root", &g, err, sizeof err), 0);
    ck_assert_uint_eq(g, 0);
    ck_assert_int_eq(kn_sockdir_group("no-such-group-kn", &g, err, sizeof err), -1);
    ck_assert_str_eq(err, "unknown group \"no-such-group-kn\": not in the group database");

    clear_env();
    char text[1024];
    snprintf(text, sizeof text,
             "{\"stats_socket\": \"%s\", \"stats_socket_group\": "
             "\"no-such-group-kn\", \"robots\": [{\"name\": \"a\", \"listen\": "
             "\"127.0.0.1:0\", \"backend\": {\"type\": \"standin\", \"address\": "
             "\"127.0.0.1:1\"}}]}",
             h_path("s.sock"));
    struct kn_config *cfg = load_text(text);
    err[0] = '\0';
    ck_assert_uint_eq(kn_cfgcheck_run(cfg, err, sizeof err), 1);
    ck_assert_msg(
        strstr(err, ": $.stats_socket_group: expected a group of this host (a name in "
                    "the group database, or a number), got \"no-such-group-kn\" (unknown group"),
        "%s", err);
    free(cfg);
}
END_TEST

START_TEST(socket_dir_for_a_group_is_0750)
{
    char sock[256];
    snprintf(sock, sizeof sock, "%s", h_path("g/stats.sock"));
    mode_t old = umask(0);
    ck_assert_int_eq(kn_sockdir_prepare_group(sock, true, getegid(), err, sizeof err), 0);
    umask(old);
    struct stat st;
    ck_assert_int_eq(stat(h_path("g"), &st), 0);
    ck_assert_uint_eq(st.st_mode & 07777, 0750);
    ck_assert_uint_eq(st.st_gid, getegid());
}
END_TEST

START_TEST(capture_dir_default_follows_the_environment)
{
    char p[512];
    unsetenv("STATE_DIRECTORY");
    unsetenv("XDG_STATE_HOME");
    setenv("STATE_DIRECTORY", "/var/lib/kenaf-simd:/var/lib/other", 1);
    setenv("XDG_STATE_HOME", "/home/u/.state", 1);
    setenv("HOME", "/home/u", 1);
    ck_assert_int_eq(kn_capdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, "/var/lib/kenaf-simd/captures");
    unsetenv("STATE_DIRECTORY");
    ck_assert_int_eq(kn_capdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, "/home/u/.state/kenaf-simd/captures");
    setenv("XDG_STATE_HOME", "relative", 1); /* not absolute: ignored, as XDG says */
    ck_assert_int_eq(kn_capdir_default(p, sizeof p), 0);
    ck_assert_str_eq(p, geteuid() == 0 ? "/var/lib/kenaf-simd/captures"
                                       : "/home/u/.local/state/kenaf-simd/captures");
    ck_assert_int_eq(kn_capdir_default(p, 10), -1); /* does not fit */
}
END_TEST

int main(void)
{
    Suite *s = suite_create("config-check-unit");
    TCase *tc = tcase_create("unit");
    tcase_add_checked_fixture(tc, h_setup, h_teardown);
    tcase_add_test(tc, default_follows_the_environment);
    tcase_add_test(tc, client_candidates_in_order);
    tcase_add_test(tc, missing_directory_is_created_0700);
    tcase_add_test(tc, directory_problems_name_their_cause);
    tcase_add_test(tc, tmp_fallback_must_be_ours);
    tcase_add_test(tc, engine_files_resolve_and_load);
    tcase_add_test(tc, checker_finds_what_start_up_would);
    tcase_add_test(tc, engine_world_capacity);
    tcase_add_test(tc, config_file_must_be_trusted);
    tcase_add_test(tc, engine_program_must_be_trusted);
    tcase_add_test(tc, socket_group_is_resolved);
    tcase_add_test(tc, socket_dir_for_a_group_is_0750);
    tcase_add_test(tc, capture_dir_default_follows_the_environment);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
