/* The world answer between kenaf-engine and kenaf-simd (usarsim_world.h):
 * base64 (RFC 4648, with padding) in parts of whole 4-character groups,
 * so each part decodes by itself and a bad part is found where it is. */
#include "usarsim_world.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RAW_CHUNK (KN_USARWORLD_CHUNK / 4 * 3) /* JSON bytes a part carries */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

const char *kn_usarworld_strerror(enum kn_usarworld_result r)
{
    switch (r) {
    case KN_USARWORLD_DONE: return "complete";
    case KN_USARWORLD_MORE: return "more parts to come";
    case KN_USARWORLD_EFIELD: return "Part, Parts, Bytes or Data missing or out of range";
    case KN_USARWORLD_EORDER: return "a part out of order or not of this answer";
    case KN_USARWORLD_EDATA: return "Data is not base64 of text";
    case KN_USARWORLD_ELENGTH: return "the parts do not add up to Bytes";
    case KN_USARWORLD_ENOMEM: return "out of memory";
    }
    return "unknown result";
}

int kn_usarworld_parts(size_t len)
{
    if (len == 0 || len > KN_USARWORLD_MAX)
        return 0;
    return (int)((len + RAW_CHUNK - 1) / RAW_CHUNK);
}

static size_t encode(const unsigned char *in, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = b64[v >> 18 & 63];
        out[o++] = b64[v >> 12 & 63];
        out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
        out[o++] = i + 2 < n ? b64[v & 63] : '=';
    }
    out[o] = '\0';
    return o;
}

int kn_usarworld_format(const char *text, size_t len, int i, char *buf, size_t cap)
{
    int n = kn_usarworld_parts(len);
    if (i < 0 || i >= n)
        return -KN_USAR_EARG;
    size_t off = (size_t)i * RAW_CHUNK;
    size_t m = len - off < RAW_CHUNK ? len - off : RAW_CHUNK;
    char data[KN_USARWORLD_CHUNK + 1];
    encode((const unsigned char *)text + off, m, data);
    struct kn_usar_writer w;
    kn_usar_w_init(&w, buf, cap, "KENAF");
    kn_usar_w_kv(&w, "Cmd", "World");
    kn_usar_w_kv(&w, "Status", "OK");
    kn_usar_w_key(&w, "Part");
    kn_usar_w_int(&w, i + 1);
    kn_usar_w_key(&w, "Parts");
    kn_usar_w_int(&w, n);
    kn_usar_w_key(&w, "Bytes");
    kn_usar_w_int(&w, (int64_t)len);
    kn_usar_w_kv(&w, "Data", data);
    return kn_usar_w_end(&w);
}

static int unb64(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;
    return p ? (int)(p - b64) : -1;
}

/* Decodes s (whole groups, '=' only at the end of the last) onto a->buf;
 * -1 when it is not base64 or holds a NUL byte. */
static int decode(struct kn_usarworld_asm *a, struct kn_usar_str s, size_t room)
{
    if (s.n == 0 || s.n % 4 || s.n / 4 * 3 > room + 2)
        return -1;
    for (size_t i = 0; i < s.n; i += 4) {
        int pad = (s.p[i + 3] == '=') + (s.p[i + 2] == '=');
        if (pad && i + 4 != s.n)
            return -1;
        if (pad == 1 && s.p[i + 3] != '=')
            return -1; /* "x=y=" style */
        uint32_t v = 0;
        for (int k = 0; k < 4; k++) {
            int d = k >= 4 - pad ? 0 : unb64(s.p[i + k]);
            if (d < 0)
                return -1;
            v = v << 6 | (uint32_t)d;
        }
        unsigned char out[3] = { (unsigned char)(v >> 16), (unsigned char)(v >> 8),
                                 (unsigned char)v };
        for (int k = 0; k < 3 - pad; k++) {
            if (out[k] == 0 || a->len >= a->total)
                return -1;
            a->buf[a->len++] = (char)out[k];
        }
    }
    return 0;
}

static enum kn_usarworld_result fail(struct kn_usarworld_asm *a, enum kn_usarworld_result r)
{
    kn_usarworld_reset(a);
    return r;
}

enum kn_usarworld_result kn_usarworld_feed(struct kn_usarworld_asm *a, const struct kn_usar_line *l)
{
    int64_t part, parts, bytes;
    struct kn_usar_str data;
    if (kn_usar_get_int(l, "Part", &part) != KN_USAR_OK ||
        kn_usar_get_int(l, "Parts", &parts) != KN_USAR_OK ||
        kn_usar_get_int(l, "Bytes", &bytes) != KN_USAR_OK ||
        kn_usar_get_str(l, "Data", &data) != KN_USAR_OK || parts < 1 ||
        parts > KN_USARWORLD_MAX_PARTS || part < 1 || part > parts || bytes < 1 ||
        (uint64_t)bytes > KN_USARWORLD_MAX || kn_usarworld_parts((size_t)bytes) != parts ||
        data.n > KN_USARWORLD_CHUNK)
        return fail(a, KN_USARWORLD_EFIELD);
    if (part == 1) {
        kn_usarworld_reset(a);
        a->buf = malloc((size_t)bytes + 1);
        if (!a->buf)
            return KN_USARWORLD_ENOMEM;
        a->total = (size_t)bytes;
        a->parts = (int)parts;
        a->next = 1;
    }
    if (!a->buf || part != a->next || parts != a->parts || (size_t)bytes != a->total)
        return fail(a, KN_USARWORLD_EORDER);
    size_t before = a->len;
    if (decode(a, data, a->total - a->len) < 0)
        return fail(a, KN_USARWORLD_EDATA);
    bool last = part == parts;
    /* every part but the last is full: the parts line up with the sender's */
    if ((!last && a->len - before != RAW_CHUNK) || (last && a->len != a->total))
        return fail(a, KN_USARWORLD_ELENGTH);
    a->next++;
    if (!last)
        return KN_USARWORLD_MORE;
    a->buf[a->len] = '\0';
    return KN_USARWORLD_DONE;
}

char *kn_usarworld_take(struct kn_usarworld_asm *a, size_t *len)
{
    char *t = a->buf;
    *len = a->len;
    memset(a, 0, sizeof *a);
    return t;
}

void kn_usarworld_reset(struct kn_usarworld_asm *a)
{
    free(a->buf);
    memset(a, 0, sizeof *a);
}
