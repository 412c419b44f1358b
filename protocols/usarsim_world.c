/* The world answer between kenaf-engine and kenaf-simd (usarsim_world.h):
 * base64 (RFC 4648, with padding) in parts of whole 4-character groups,
 * so each part decodes by itself and a bad part is found where it is. */
#include "usarsim_world.h"

#include <nettle/base64.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RAW_CHUNK (KN_USARWORLD_CHUNK / 4 * 3) /* JSON bytes a part carries */

/* nettle's alphabet, which its decoder would otherwise stretch: it skips
 * white space, and this format has none */
static const char B64_CHARS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

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

int kn_usarworld_format(const char *text, size_t len, int i, char *buf, size_t cap)
{
    int n = kn_usarworld_parts(len);
    if (i < 0 || i >= n)
        return -KN_USAR_EARG;
    size_t off = (size_t)i * RAW_CHUNK;
    size_t m = len - off < RAW_CHUNK ? len - off : RAW_CHUNK;
    char data[KN_USARWORLD_CHUNK + 1];
    base64_encode_raw(data, m, (const uint8_t *)text + off);
    data[BASE64_ENCODE_RAW_LENGTH(m)] = '\0';
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

/* Decodes s (whole groups, '=' only at the end of the last) onto a->buf;
 * -1 when it is not base64 or holds a NUL byte. */
static int decode(struct kn_usarworld_asm *a, struct kn_usar_str s, size_t room)
{
    if (s.n == 0 || s.n % 4 || s.n / 4 * 3 > room + 2)
        return -1;
    /* padding only at the very end, as nettle's final check expects of a
     * whole part; anything else outside the alphabet is refused here */
    size_t body = s.n;
    while (body > s.n - 2 && s.p[body - 1] == '=')
        body--;
    for (size_t i = 0; i < body; i++)
        if (!s.p[i] || !strchr(B64_CHARS, s.p[i]))
            return -1;
    uint8_t out[BASE64_DECODE_LENGTH(KN_USARWORLD_CHUNK)];
    size_t n = 0;
    struct base64_decode_ctx ctx;
    base64_decode_init(&ctx);
    if (!base64_decode_update(&ctx, &n, out, s.n, s.p) || !base64_decode_final(&ctx))
        return -1;
    if (n > a->total - a->len || memchr(out, 0, n))
        return -1;
    memcpy(a->buf + a->len, out, n);
    a->len += n;
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
