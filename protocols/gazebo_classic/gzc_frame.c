/* The Gazebo Classic stream framer: see gzc_frame.h. */
#include "gzc_frame.h"

#include <string.h>

void kn_gzc_framer_init(struct kn_gzc_framer *f, uint8_t *storage, size_t cap)
{
    memset(f, 0, sizeof *f);
    f->buf = storage;
    f->cap = cap > KN_GZC_FRAME_MAX ? KN_GZC_FRAME_MAX : cap;
}

void kn_gzc_framer_reset(struct kn_gzc_framer *f)
{
    f->hlen = 0;
    f->need = 0;
    f->have = 0;
    f->err = KN_GZC_FRAME_OK;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The header is complete: check it, set need. */
static bool parse_header(struct kn_gzc_framer *f)
{
    uint64_t v = 0;
    for (int i = 0; i < KN_GZC_HEADER_LEN; i++) {
        int d = hexval(f->hdr[i]);
        if (d < 0) {
            f->err = KN_GZC_FRAME_EHEX;
            return false;
        }
        v = v * 16 + (uint64_t)d;
    }
    if (v == 0) {
        f->err = KN_GZC_FRAME_EEMPTY;
        return false;
    }
    if (v > f->cap) {
        f->err = KN_GZC_FRAME_ETOOBIG;
        return false;
    }
    f->need = (size_t)v;
    f->have = 0;
    return true;
}

static bool deliver(struct kn_gzc_framer *f, const uint8_t *p, size_t len, kn_gzc_frame_fn fn,
                    void *ctx)
{
    f->frames++;
    f->bytes += len;
    f->hlen = 0;
    f->need = 0;
    f->have = 0;
    return fn(ctx, p, len);
}

size_t kn_gzc_framer_feed(struct kn_gzc_framer *f, const uint8_t *data, size_t n,
                          kn_gzc_frame_fn fn, void *ctx)
{
    size_t i = 0;
    if (f->err)
        return 0;
    while (i < n) {
        if (f->need == 0) {
            size_t take = KN_GZC_HEADER_LEN - f->hlen;
            if (take > n - i)
                take = n - i;
            memcpy(f->hdr + f->hlen, data + i, take);
            f->hlen += take;
            i += take;
            if (f->hlen < KN_GZC_HEADER_LEN)
                break;
            if (!parse_header(f)) {
                f->errors++;
                return i;
            }
            continue;
        }
        size_t left = f->need - f->have;
        if (f->have == 0 && n - i >= left) {
            /* the whole payload is in this input: no copy */
            const uint8_t *p = data + i;
            i += left;
            if (!deliver(f, p, left, fn, ctx))
                return i;
            continue;
        }
        size_t take = left < n - i ? left : n - i;
        memcpy(f->buf + f->have, data + i, take);
        f->have += take;
        i += take;
        if (f->have == f->need && !deliver(f, f->buf, f->need, fn, ctx))
            return i;
    }
    return i;
}

const char *kn_gzc_frame_strerror(enum kn_gzc_frame_err e)
{
    switch (e) {
    case KN_GZC_FRAME_OK: return "ok";
    case KN_GZC_FRAME_EHEX: return "frame header is not 8 hex digits";
    case KN_GZC_FRAME_EEMPTY: return "frame header says 0 bytes";
    case KN_GZC_FRAME_ETOOBIG: return "frame longer than the limit";
    }
    return "?";
}

void kn_gzc_frame_header(char out[KN_GZC_HEADER_LEN], size_t len)
{
    static const char digits[] = "0123456789abcdef";
    uint32_t v = (uint32_t)len;
    for (int i = KN_GZC_HEADER_LEN - 1; i >= 0; i--) {
        out[i] = digits[v & 0xf];
        v >>= 4;
    }
}
