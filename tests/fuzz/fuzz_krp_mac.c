/* libFuzzer target for the shared-key trailer (protocols/krp_mac.h).
 * Any bytes verify to a defined verdict without touching buf unless OK; a
 * datagram that verifies re-signs from its stripped form to the very same
 * bytes; any input that decodes as KRP/1 signs, verifies back to
 * itself and is refused once a byte the input picks is flipped; and the
 * replay filter (protocols/krp_replay.h), driven by a run of counters,
 * tags and clock readings read from the input, takes each datagram at
 * most once, never one outside its window or at or below its floor, and
 * never holds more than it may. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"
#include "krp_mac.h"
#include "krp_replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP (KN_KRP_MAX_DGRAM + 2 * KN_KRPMAC_TRAILER)

/* The unit tests' key (00 01 ... 1f), so their golden datagrams seed the
 * corpus with trailers that verify. */
static const struct kn_krpmac_key *key(void)
{
    static struct kn_krpmac_key k;
    static int ready;
    if (!ready) {
        uint8_t raw[32];
        for (int i = 0; i < 32; i++)
            raw[i] = (uint8_t)i;
        if (kn_krpmac_key_set(&k, raw, sizeof raw) != 0)
            abort();
        ready = 1;
    }
    return &k;
}

/* Whatever the bytes, a verdict; only OK changes them, and only by
 * stripping the trailer and the flag, which signing puts back. */
static void verify_any(const uint8_t *data, size_t size)
{
    if (size > CAP)
        return;
    uint8_t buf[CAP];
    memcpy(buf, data, size);
    size_t n = size;
    uint64_t ctr = 0;
    enum kn_krpmac_verdict v = kn_krpmac_verify(key(), buf, &n, &ctr);
    if (v != KN_KRPMAC_OK) {
        if ((v != KN_KRPMAC_MISSING && v != KN_KRPMAC_BAD) || n != size ||
            memcmp(buf, data, size) != 0)
            abort();
        return;
    }
    if (n + KN_KRPMAC_TRAILER != size || (buf[11] & (KN_KRPMAC_F_MAC >> 8)))
        abort();
    if (kn_krpmac_sign(key(), ctr, buf, n, sizeof buf) != size || memcmp(buf, data, size) != 0)
        abort();
}

/* A valid datagram: sign, verify, compare; one flipped byte is refused. */
static void round_trip(const uint8_t *data, size_t size)
{
    struct kn_krp_msg m;
    if (size > KN_KRP_MAX_DGRAM || kn_krp_decode(data, size, &m) != KN_KRP_OK)
        return;
    uint8_t buf[CAP], orig[CAP];
    memcpy(buf, data, size);
    /* a counter from the input, so every value of it gets exercised */
    uint64_t want = 0;
    for (size_t i = 0; i < size; i++)
        want = want * 1099511628211ull ^ data[i];
    size_t n = kn_krpmac_sign(key(), want, buf, size, sizeof buf);
    if (n != size + KN_KRPMAC_TRAILER)
        abort();
    memcpy(orig, buf, n);
    size_t flip = want % n;
    buf[flip] ^= (uint8_t)(1u << (want >> 32) % 8);
    size_t len = n;
    uint64_t ctr = 0;
    enum kn_krpmac_verdict v = kn_krpmac_verify(key(), buf, &len, &ctr);
    if (v == KN_KRPMAC_OK || len != n)
        abort();
    buf[flip] = orig[flip];
    if (kn_krpmac_verify(key(), buf, &len, &ctr) != KN_KRPMAC_OK || len != size || ctr != want)
        abort();
    /* the stripped form is the input with the flag cleared */
    uint8_t plain[KN_KRP_MAX_DGRAM];
    memcpy(plain, data, size);
    plain[11] &= (uint8_t) ~(KN_KRPMAC_F_MAC >> 8);
    if (memcmp(buf, plain, size) != 0)
        abort();
}

static uint64_t get(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* The filter against a plain record of every datagram it took: 12 bytes
 * a step (a clock move back or forth of up to +-32 s, a counter relative
 * to the clock of up to +-64 s, a tag of 2 values), in a filter of 8. */
static void filter_steps(const uint8_t *data, size_t size)
{
    enum { FCAP = 8, FMAX = 512 };
    const uint64_t base = 1700000000000000ull;
    uint64_t now = base, floor = base - 100000000ull;
    struct kn_krpreplay *f = kn_krpreplay_new(FCAP, floor);
    if (!f)
        abort();
    static uint64_t took_c[FMAX];
    static uint8_t took_t[FMAX];
    size_t took = 0;
    for (size_t off = 0; off + 12 <= size && took < FMAX; off += 12) {
        const uint8_t *p = data + off;
        now = now + (get(p, 4) % 64000001u) - 32000000u;
        uint64_t c = now + (get(p + 4, 4) % 128000001u) - 64000000u;
        uint8_t tag[KN_KRPREPLAY_TAG_LEN] = { 0 };
        tag[7] = p[8] & 1;
        uint64_t floor_before = kn_krpreplay_floor(f);
        enum kn_krpreplay_verdict v = kn_krpreplay_check(f, c, tag, now);
        bool seen = false;
        for (size_t i = 0; i < took; i++)
            seen |= took_c[i] == c && took_t[i] == tag[7];
        if (kn_krpreplay_held(f) > FCAP || kn_krpreplay_floor(f) < floor_before)
            abort();
        switch (v) {
        case KN_KRPREPLAY_OK:
            if (seen || c > now + KN_KRPREPLAY_FUTURE_US || c <= now - KN_KRPREPLAY_PAST_US ||
                c <= kn_krpreplay_floor(f) || c <= floor_before)
                abort();
            took_c[took] = c;
            took_t[took++] = tag[7];
            break;
        case KN_KRPREPLAY_REPLAYED:
            if (!seen)
                abort();
            break;
        case KN_KRPREPLAY_TOO_OLD:
            if (c > now - KN_KRPREPLAY_PAST_US)
                abort();
            break;
        case KN_KRPREPLAY_TOO_NEW:
            if (c <= now + KN_KRPREPLAY_FUTURE_US)
                abort();
            break;
        case KN_KRPREPLAY_FLOOR:
            if (c > kn_krpreplay_floor(f))
                abort();
            break;
        default: abort();
        }
    }
    kn_krpreplay_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    verify_any(data, size);
    round_trip(data, size);
    filter_steps(data, size);
    return 0;
}
