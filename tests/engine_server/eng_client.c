/* Test helpers for kenaf-engine's server: see eng_client.h. */
#include "eng_client.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <check.h>

void ec_engine_start(struct ec_engine *e, const char *const extra[])
{
    e->port = h_engine_start(&e->proc, extra, false);
}

void ec_connect(struct ec_conn *c, int port)
{
    c->fd = h_tcp_connect(port);
    c->len = 0;
    c->eof = false;
    c->last[0] = '\0';
}

void ec_close(struct ec_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

void ec_send_raw(struct ec_conn *c, const void *data, size_t len)
{
    h_write_all(c->fd, data, len);
}

void ec_send(struct ec_conn *c, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ck_assert(n > 0 && (size_t)n < sizeof buf);
    ec_send_raw(c, buf, (size_t)n);
}

bool ec_line(struct ec_conn *c, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    for (;;) {
        char *nl = memchr(c->buf, '\n', c->len);
        if (nl) {
            size_t n = (size_t)(nl - c->buf);
            size_t keep = n < sizeof c->last - 1 ? n : sizeof c->last - 1;
            memcpy(c->last, c->buf, keep);
            while (keep && (c->last[keep - 1] == '\r' || c->last[keep - 1] == '\n'))
                keep--;
            c->last[keep] = '\0';
            memmove(c->buf, nl + 1, c->len - n - 1);
            c->len -= n + 1;
            if (kn_usar_tokenize(c->last, keep, &c->tl) != KN_USAR_OK)
                memset(&c->tl, 0, sizeof c->tl);
            return true;
        }
        if (c->eof || c->len == sizeof c->buf)
            return false;
        if ((int64_t)(end - h_now_us()) <= 0)
            return false;
        if (!h_wait_readable(c->fd, end))
            continue;
        ssize_t k = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            c->eof = true;
            continue;
        }
        c->len += (size_t)k;
    }
}

static bool group_is(struct ec_conn *c, const char *key, const char *want)
{
    struct kn_usar_str v;
    return kn_usar_get_str(&c->tl, key, &v) == KN_USAR_OK && kn_usar_str_is(v, want);
}

bool ec_wait_head(struct ec_conn *c, const char *head, const char *type, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000) + 1;
        if (!ec_line(c, left))
            return false;
        if (!kn_usar_str_is(c->tl.head, head))
            continue;
        if (type && !group_is(c, "Type", type))
            continue;
        return true;
    }
    return false;
}

bool ec_wait_kenaf(struct ec_conn *c, const char *cmd, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "KENAF", NULL, left))
            return false;
        if (group_is(c, "Cmd", cmd))
            return true;
    }
    return false;
}

bool ec_wait_sen(struct ec_conn *c, enum kn_usar_sen_type type, double min_time,
                 struct kn_usar_sen *out, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "SEN", NULL, left))
            return false;
        if (kn_usar_parse_sen(&c->tl, out) != KN_USAR_OK || out->sen_type != type)
            continue;
        if (out->has_time && out->time < min_time)
            continue;
        return true;
    }
    return false;
}

bool ec_wait_sta(struct ec_conn *c, double min_time, struct kn_usar_sta *out, int timeout_ms)
{
    uint64_t end = h_now_us() + (uint64_t)timeout_ms * 1000u;
    while (h_now_us() < end) {
        int left = (int)((end - h_now_us()) / 1000) + 1;
        if (!ec_wait_head(c, "STA", NULL, left))
            return false;
        if (kn_usar_parse_sta(&c->tl, out) != KN_USAR_OK || !out->has_time)
            continue;
        if (out->time < min_time)
            continue;
        return true;
    }
    return false;
}

void ec_stats(struct ec_conn *c)
{
    ec_send(c, "KENAF {Cmd Stats}\r\n");
    ck_assert_msg(ec_wait_kenaf(c, "Stats", H_LONG_MS), "no Stats reply");
}

int64_t ec_stat(struct ec_conn *c, const char *key)
{
    int64_t v;
    ck_assert_msg(kn_usar_get_int(&c->tl, key, &v) == KN_USAR_OK, "no {%s} in \"%s\"", key,
                  c->last);
    return v;
}

int64_t ec_stat_now(struct ec_conn *c, const char *key)
{
    ec_stats(c);
    return ec_stat(c, key);
}

const struct kn_conv_table *ec_table(void)
{
    static struct kn_conv_table t;
    static bool init;
    if (!init) {
        kn_conv_table_usarsim(&t);
        t.wheel_radius_m = 0.08;
        t.counts_per_m = 4000;
        init = true;
    }
    return &t;
}
