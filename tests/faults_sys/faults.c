/* Fault-test helpers: see faults.h. */
#include "faults.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fault_ctl ---- */

static bool parse_line(const char *text, struct f_line *l)
{
    unsigned long long t;
    int off = 0;
    memset(l, 0, sizeof *l);
    if (sscanf(text, "%7s %llu %n", l->kind, &t, &off) < 2 || off == 0)
        return false;
    l->t_us = t;
    snprintf(l->rest, sizeof l->rest, "%s", text + off);
    return true;
}

static bool read_one(struct f_ctl *c, int timeout_ms)
{
    char buf[256];
    for (;;) {
        if (!h_read_line(&c->proc, buf, sizeof buf, timeout_ms))
            return false;
        if (c->n >= F_CTL_LINES)
            return false;
        if (parse_line(buf, &c->line[c->n])) {
            c->n++;
            return true;
        }
        fprintf(stderr, "fault_ctl said: %s\n", buf);
    }
}

void f_ctl_start(struct f_ctl *c, int port, const char *const steps[], char *const env[])
{
    const char *exe = getenv("KN_FAULT_CTL");
    ck_assert_msg(exe != NULL, "KN_FAULT_CTL not set");
    memset(c, 0, sizeof *c);
    char *argv[48];
    int n = 0;
    argv[n++] = (char *)exe;
    for (int i = 0; steps[i] && n < 47; i++)
        argv[n++] = (char *)steps[i];
    argv[n] = NULL;
    static char robot[64];
    snprintf(robot, sizeof robot, "KENAF_ROBOT=127.0.0.1:%d", port);
    char *full_env[16] = { robot, NULL };
    for (int i = 0; env && env[i] && i < 14; i++) {
        full_env[i + 1] = env[i];
        full_env[i + 2] = NULL;
    }
    h_spawn(&c->proc, argv, full_env, "fault_ctl.stderr");
    int i = f_ctl_wait(c, 0, "INIT", NULL, H_LONG_MS);
    ck_assert_msg(i >= 0, "fault_ctl did not start: %s", h_stderr(&c->proc));
    ck_assert_msg(f_line_rc(&c->line[i]) == 0, "hrt_kenaf_init gave %s", c->line[i].rest);
}

int f_ctl_wait(struct f_ctl *c, int from, const char *kind, const char *rest_prefix, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (int i = from;; i++) {
        while (i >= c->n) {
            int left = (int)((int64_t)(end - h_now_us()) / 1000);
            if (left <= 0 || !read_one(c, left))
                return -1;
        }
        if (strcmp(c->line[i].kind, kind) == 0 &&
            (!rest_prefix || strncmp(c->line[i].rest, rest_prefix, strlen(rest_prefix)) == 0))
            return i;
    }
}

void f_ctl_drain(struct f_ctl *c)
{
    while (read_one(c, 20)) {
    }
}

int f_line_rc(const struct f_line *l)
{
    int rc = 1;
    if (strcmp(l->kind, "RESULT") == 0) {
        char step[16];
        if (sscanf(l->rest, "%15s %d", step, &rc) != 2)
            return 1;
    } else if (sscanf(l->rest, "%d", &rc) != 1) {
        return 1;
    }
    return rc;
}

unsigned f_line_flags(const struct f_line *l)
{
    int rc;
    unsigned flags = 0;
    if (sscanf(l->rest, "%d %u", &rc, &flags) != 2)
        return 0;
    return flags;
}

/* ---- STATUS ---- */

struct f_st f_status(struct h_udp *u)
{
    struct f_st r;
    r.s = h_status_any(u);
    r.t_us = h_now_us();
    return r;
}

bool f_status_until(struct h_udp *u, bool (*pred)(const struct kn_krp_status *, void *), void *arg,
                    int poll_ms, int timeout_ms, struct f_st *out)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        *out = f_status(u);
        if (pred(&out->s, arg))
            return true;
        if (h_now_us() >= end)
            return false;
        if (poll_ms > 0)
            h_sleep_ms(poll_ms);
    }
}

/* ---- processes ---- */

int f_engine_start(struct h_proc *p, const char *const extra[])
{
    const char *args[40] = { "--quiet" };
    for (int i = 0; extra && extra[i] && i < 38; i++)
        args[i + 1] = extra[i];
    return h_engine_start(p, args, true);
}

/* ---- figures ---- */

void f_figure(const char *name, const char *fmt, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    printf("FIGURE %s: %s\n", name, text);
    fflush(stdout);
}

double f_ms(uint64_t from, uint64_t to)
{
    return ((double)to - (double)from) / 1000.0;
}
