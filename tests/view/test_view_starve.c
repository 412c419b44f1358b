/* kenaf-view starved of CPU and given it back: kenaf-simd with four robots
 * on the stand-in simulator, kenaf-view watching them with a WebSocket
 * client attached, then kenaf-view stopped outright (SIGSTOP for 6 s:
 * longer than the daemon keeps a silent session, so the view must notice
 * and say HELLO again) and squeezed (a cgroup with a CPU quota of 5 % for
 * 3 s; cgroup v2's cpu.max, else v1's cpu.cfs_quota_us; that part is
 * skipped, saying why, where neither can be used). After each, every
 * robot's link must be up again with fresh states flowing, within a
 * generous deadline; the time it took is printed, not asserted. Before
 * that, the page's states arrive batched: several robots per message.
 * One case per meson test (CK_RUN_CASE). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "view_harness.h"

#define NROBOTS 4
#define RECOVER_BOUND_MS 10000 /* generous: the figure printed is what counts */
#define FRESH_STATES 5         /* pushes after the backlog: 0.1 s at 50 Hz */

static struct h_standin sim;
static struct h_daemon d;
static struct vw_view v;

static void fleet_up(void)
{
    h_standin_start(&sim, 0, "sim", NULL);
    static char json[4096];
    size_t n = (size_t)snprintf(json, sizeof json, "[");
    for (int i = 0; i < NROBOTS; i++) {
        char name[16];
        snprintf(name, sizeof name, "kenaf%d", i);
        n += (size_t)snprintf(json + n, sizeof json - n, "%s%s", i ? "," : "",
                              h_standin_robot(name, sim.port, NULL));
    }
    snprintf(json + n, sizeof json - n, "]");
    h_daemon_launch(&d, "kenaf-simd", json, NULL, NULL, true);
    static char spec[NROBOTS][64];
    const char *args[2 * NROBOTS + 1];
    for (int i = 0; i < NROBOTS; i++) {
        h_wait_backend_fresh(&d, i, H_LONG_MS);
        snprintf(spec[i], sizeof spec[i], "127.0.0.1:%d", d.port[i]);
        args[2 * i] = "--robot";
        args[2 * i + 1] = spec[i];
    }
    args[2 * NROBOTS] = NULL;
    vw_view_start(&v, args);
    for (int i = 0; i < NROBOTS; i++) {
        char path[64];
        snprintf(path, sizeof path, "robots.%d.krp_in.statuses", i);
        ck_assert_msg(vw_wait_stat(&v, path, 20, H_LONG_MS), "robot %d sends no states", i);
    }
}

/* Every robot up with FRESH_STATES states more than at the first look
 * after the starvation ended (that look is answered after whatever had
 * queued up meanwhile, so what comes after it is new). Returns the
 * milliseconds it took from `since_us`, failing after RECOVER_BOUND_MS. */
static double wait_recovered(uint64_t since_us, const char *what)
{
    double base[NROBOTS];
    cJSON *s = vw_stats(&v);
    for (int i = 0; i < NROBOTS; i++) {
        const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "robots"), i);
        base[i] = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "krp_in"), "statuses")->valuedouble;
    }
    cJSON_Delete(s);
    uint64_t end = since_us + RECOVER_BOUND_MS * 1000ull;
    char why[1024] = "";
    for (;;) {
        s = vw_stats(&v);
        bool all = true;
        why[0] = '\0';
        for (int i = 0; i < NROBOTS; i++) {
            const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "robots"), i);
            bool up = cJSON_IsTrue(cJSON_GetObjectItem(r, "up"));
            double n =
                cJSON_GetObjectItem(cJSON_GetObjectItem(r, "krp_in"), "statuses")->valuedouble;
            if (!up || n < base[i] + FRESH_STATES) {
                all = false;
                size_t k = strlen(why);
                snprintf(why + k, sizeof why - k, " robot %d: up %d, %.0f states since", i, up,
                         n - base[i]);
            }
        }
        uint64_t now = h_now_us();
        if (all) {
            double ms = (double)(now - since_us) / 1000.0;
            printf("FIGURE view_recovery_after_%s %.0f ms (%d robots)\n", what, ms, NROBOTS);
            fflush(stdout);
            const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(s, "robots"), 0);
            char *link = cJSON_PrintUnformatted(cJSON_GetObjectItem(r0, "link"));
            printf("robot 0 after %s: link events %s, HELLO_ACKs %.0f, BAD_SESSION %.0f\n", what,
                   link, vw_stat(&v, "robots.0.krp_in.hello_acks"),
                   vw_stat(&v, "robots.0.krp_in.errors.BAD_SESSION"));
            free(link);
            cJSON_Delete(s);
            return ms;
        }
        cJSON_Delete(s);
        ck_assert_msg(now < end, "not recovered %d ms after %s:%s", RECOVER_BOUND_MS, what, why);
        h_sleep_ms(20);
    }
}

/* Where a CPU quota can be set for one process: a fresh cgroup under
 * cgroup v2 (with the cpu controller) or v1's cpu hierarchy. Fills dir
 * and returns the version, or 0 with the reason in why. */
static int cgroup_make(char *dir, size_t len, char *why, size_t whylen)
{
    char ctl[256] = "";
    FILE *f = fopen("/sys/fs/cgroup/cgroup.controllers", "r");
    if (f) {
        if (!fgets(ctl, sizeof ctl, f))
            ctl[0] = '\0';
        fclose(f);
    }
    const char *base = NULL;
    int ver = 0;
    if (strstr(ctl, "cpu")) {
        base = "/sys/fs/cgroup";
        ver = 2;
    } else if (access("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", W_OK) == 0) {
        base = "/sys/fs/cgroup/cpu";
        ver = 1;
    } else {
        snprintf(why, whylen, "no cgroup v2 cpu controller and no writable v1 cpu hierarchy");
        return 0;
    }
    snprintf(dir, len, "%s/kenaf-view-test-%d", base, (int)getpid());
    if (mkdir(dir, 0755) < 0) {
        snprintf(why, whylen, "cannot make %s: %s", dir, strerror(errno));
        return 0;
    }
    return ver;
}

static bool write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Puts pid in a cgroup at `percent` of one CPU for ms, then lifts the
 * quota and moves the process back to the root. False (with why) when
 * the cgroup could not be used. */
static bool squeeze(pid_t pid, int percent, int ms, char *why, size_t whylen)
{
    char dir[300], text[64];
    int ver = cgroup_make(dir, sizeof dir, why, whylen);
    if (!ver)
        return false;
    const char *root = ver == 2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/cpu";
    char quota[64];
    if (ver == 2)
        snprintf(quota, sizeof quota, "%d 100000", percent * 1000);
    else
        snprintf(quota, sizeof quota, "%d", percent * 1000);
    bool ok = (ver == 1 ? write_file(dir, "cpu.cfs_period_us", "100000") : true) &&
              write_file(dir, ver == 2 ? "cpu.max" : "cpu.cfs_quota_us", quota);
    snprintf(text, sizeof text, "%d", (int)pid);
    ok = ok && write_file(dir, "cgroup.procs", text);
    if (!ok)
        snprintf(why, whylen, "cannot set a CPU quota in %s: %s", dir, strerror(errno));
    else
        h_sleep_ms(ms);
    write_file(dir, ver == 2 ? "cpu.max" : "cpu.cfs_quota_us", ver == 2 ? "max" : "-1");
    bool back = write_file(root, "cgroup.procs", text);
    ck_assert_msg(rmdir(dir) == 0 || !ok, "cannot remove %s: %s", dir, strerror(errno));
    ck_assert_msg(back || !ok, "cannot move kenaf-view out of %s", dir);
    return ok;
}

/* The pages get the robots' states in batches: one "states" message with
 * the news of several robots, no robot twice in one. */
static void expect_batches(struct vw_ws *a)
{
    bool several = false;
    for (int k = 0; k < 200 && !several; k++) {
        cJSON *m = vw_ws_expect(a, "states", H_LONG_MS);
        ck_assert_ptr_nonnull(m);
        const cJSON *list = cJSON_GetObjectItem(m, "states"), *s;
        ck_assert(cJSON_GetArraySize(list) >= 1);
        bool seen[NROBOTS] = { false };
        cJSON_ArrayForEach(s, list)
        {
            ck_assert_str_eq(cJSON_GetObjectItem(s, "type")->valuestring, "state");
            int id = cJSON_GetObjectItem(s, "robot")->valueint;
            ck_assert_int_ge(id, 0);
            ck_assert_int_lt(id, NROBOTS);
            ck_assert_msg(!seen[id], "robot %d twice in one batch", id);
            seen[id] = true;
        }
        several = cJSON_GetArraySize(list) >= 2;
        cJSON_Delete(m);
    }
    ck_assert_msg(several, "200 batches with one robot's state each");
    ck_assert(vw_stat(&v, "frames_out.states") < vw_stat(&v, "frames_out.state"));
}

START_TEST(starved)
{
    fleet_up();
    struct vw_ws a;
    vw_ws_open(&a, v.port);
    expect_batches(&a);
    cJSON *st = vw_ws_expect(&a, "state", H_LONG_MS);
    ck_assert_ptr_nonnull(st);
    cJSON_Delete(st);

    /* stopped outright, past the daemon's 5 s session silence (whether the
     * daemon had ended the session by then depends on when it looked:
     * both ways must recover; hello_acks in the printed counters says
     * which it was) */
    h_signal(&v.proc, SIGSTOP);
    h_sleep_ms(6000);
    h_signal(&v.proc, SIGCONT);
    wait_recovered(h_now_us(), "sigstop_6s");
    char why[400] = "";
    if (squeeze(v.proc.pid, 5, 3000, why, sizeof why))
        wait_recovered(h_now_us(), "cpu_5pct_3s");
    else
        printf("the CPU quota part is skipped: %s\n", why);

    /* the page's socket lived through it all and still gets states */
    st = vw_ws_expect(&a, "state", H_LONG_MS);
    ck_assert_ptr_nonnull(st);
    cJSON_Delete(st);
    vw_ws_close(&a, true);
}
END_TEST

int main(void)
{
    const struct h_case cases[] = {
        { "starved", starved, 60, NULL, NULL },
    };
    h_not_wrapped("starved", "valgrind starves kenaf-view by itself");
    return h_run_cases("view-starve", cases, sizeof cases / sizeof cases[0]);
}
