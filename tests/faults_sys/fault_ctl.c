/* fault_ctl: a small controller for the fault-tolerance tests, an ordinary
 * program on libkenaf (kenaf.h only). It runs the steps given on its
 * command line and reports on stdout, one line each, with CLOCK_MONOTONIC
 * time stamps in microseconds (the clock the tests measure with), so a
 * test can tell when the library saw a fault and when it recovered:
 *
 *   INIT <t> <rc>                 hrt_kenaf_init
 *   ST <t> <rc> <flags>           hrt_get_status changed (a watcher thread
 *                                 polls it every 2 ms from init on)
 *   RESULT <t> <step> <rc> ...    a step finished; fwd and turn add the
 *                                 seconds it took, the change of the left
 *                                 and right counts and of the yaw (deg),
 *                                 read 0.5 s after a motion that succeeded
 *   RC <t> <rc_set> <rc_get> <flags>   loop: a call's result changed
 *
 * Steps:
 *   flip DEG        all four flippers to DEG; waits until STATUS shows them
 *                   within 1 deg (10 s at most)
 *   fwd MM          hrt_go_forward(MM)
 *   turn DEG        hrt_turning(DEG)
 *   speed L R       hrt_set_crawler_speed(L, R) once: the library holds it
 *   waitok SECS     until hrt_get_status returns 0 (link and simulator up)
 *   sleep MS        wall-clock sleep
 *   loop MS L R     forever: hrt_set_crawler_speed(L, R) and hrt_get_status
 *                   every MS ms
 *   watch           forever: only the watcher thread reports
 *
 * Exit status 0 when every step ran, 1 when a step gave up, 2 on usage or
 * init failure. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kenaf.h"

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&out_mu);
    vprintf(fmt, ap);
    fflush(stdout);
    pthread_mutex_unlock(&out_mu);
    va_end(ap);
}

/* Reports every change of hrt_get_status's result or of the flags. */
static void *watcher(void *arg)
{
    (void)arg;
    int last_rc = 1;
    uint32_t last_flags = 0xffffffffu;
    for (;;) {
        hrt_status st;
        int rc = hrt_get_status(&st);
        if (rc == HRT_ENOTINIT)
            return NULL;
        if (rc != last_rc || st.flags != last_flags) {
            say("ST %llu %d %u\n", (unsigned long long)now_us(), rc, (unsigned)st.flags);
            last_rc = rc;
            last_flags = st.flags;
        }
        sleep_ms(2);
    }
}

static bool flippers_at(double deg)
{
    hrt_status st;
    if (hrt_get_status(&st) != 0)
        return false;
    for (int k = 0; k < 4; k++)
        if (fabs(st.flipper_angle[k] - deg) > 1.0)
            return false;
    return true;
}

static int step_flip(double deg)
{
    const double all[4] = { deg, deg, deg, deg };
    int rc = hrt_set_flipper_angles(all);
    uint64_t end = now_us() + 10000000u;
    while (!flippers_at(deg) && now_us() < end)
        sleep_ms(10);
    bool there = flippers_at(deg);
    say("RESULT %llu flip %d %s\n", (unsigned long long)now_us(), rc,
        there ? "there" : "not-there");
    return there ? 0 : 1;
}

static int step_waitok(double secs)
{
    uint64_t end = now_us() + (uint64_t)(secs * 1e6);
    hrt_status st;
    int rc;
    while ((rc = hrt_get_status(&st)) != 0 && now_us() < end)
        sleep_ms(2);
    say("RESULT %llu waitok %d\n", (unsigned long long)now_us(), rc);
    return rc == 0 ? 0 : 1;
}

static void run_loop(int ms, double l, double r)
{
    int last_set = 1, last_get = 1;
    uint32_t last_flags = 0xffffffffu;
    for (;;) {
        int rs = hrt_set_crawler_speed(l, r);
        hrt_status st;
        int rg = hrt_get_status(&st);
        if (rs != last_set || rg != last_get || st.flags != last_flags) {
            say("RC %llu %d %d %u\n", (unsigned long long)now_us(), rs, rg, (unsigned)st.flags);
            last_set = rs;
            last_get = rg;
            last_flags = st.flags;
        }
        sleep_ms(ms);
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: fault_ctl STEP... (flip DEG | fwd MM | turn DEG | speed L R | "
                    "waitok SECS | sleep MS | loop MS L R | watch)\n");
}

/* Number argument i of the step at argv[k]; exits on a bad one. */
static double num(int argc, char **argv, int i)
{
    char *end;
    if (i >= argc) {
        usage();
        exit(2);
    }
    double v = strtod(argv[i], &end);
    if (end == argv[i] || *end != '\0' || !isfinite(v)) {
        usage();
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    int rc = hrt_kenaf_init();
    say("INIT %llu %d\n", (unsigned long long)now_us(), rc);
    if (rc != 0)
        return 2;
    pthread_t th;
    if (pthread_create(&th, NULL, watcher, NULL) != 0)
        return 2;
    int status = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (strcmp(s, "flip") == 0) {
            status |= step_flip(num(argc, argv, ++i));
        } else if (strcmp(s, "fwd") == 0 || strcmp(s, "turn") == 0) {
            double v = num(argc, argv, ++i);
            hrt_status a, b;
            hrt_get_status(&a);
            uint64_t t0 = now_us();
            int r = s[0] == 'f' ? hrt_go_forward(v) : hrt_turning(v);
            uint64_t t1 = now_us();
            /* where it ended, once slow sensors caught up */
            sleep_ms(r == 0 ? 500 : 0);
            hrt_get_status(&b);
            double dyaw = remainder(b.yaw - a.yaw, 360.0);
            say("RESULT %llu %s %d %.3f %d %d %.2f\n", (unsigned long long)t1, s, r,
                (double)(t1 - t0) / 1e6,
                (int)((uint32_t)b.crawler_count[0] - (uint32_t)a.crawler_count[0]),
                (int)((uint32_t)b.crawler_count[1] - (uint32_t)a.crawler_count[1]), dyaw);
        } else if (strcmp(s, "speed") == 0) {
            double l = num(argc, argv, i + 1), r = num(argc, argv, i + 2);
            i += 2;
            say("RESULT %llu speed %d\n", (unsigned long long)now_us(),
                hrt_set_crawler_speed(l, r));
        } else if (strcmp(s, "waitok") == 0) {
            status |= step_waitok(num(argc, argv, ++i));
        } else if (strcmp(s, "sleep") == 0) {
            sleep_ms((int)num(argc, argv, ++i));
        } else if (strcmp(s, "loop") == 0) {
            int ms = (int)num(argc, argv, i + 1);
            double l = num(argc, argv, i + 2), r = num(argc, argv, i + 3);
            run_loop(ms < 1 ? 1 : ms, l, r);
        } else if (strcmp(s, "watch") == 0) {
            for (;;)
                sleep_ms(1000);
        } else {
            usage();
            hrt_kenaf_exit();
            return 2;
        }
    }
    say("DONE %llu %d\n", (unsigned long long)now_us(), status);
    hrt_kenaf_exit();
    pthread_join(th, NULL);
    return status;
}
