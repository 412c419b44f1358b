/* libFuzzer target for the shared-key trailer (protocols/krp_mac.h).
 * Any bytes verify to a defined verdict without touching buf unless OK; a
 * datagram that verifies re-signs from its stripped form to the very same
 * bytes; and any input that decodes as KRP/1 signs, verifies back to
 * itself, is refused once a byte the input picks is flipped, and is taken
 * once per counter by the replay table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"
#include "krp_mac.h"

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
    struct kn_krpmac_replay *t = kn_krpmac_replay_new(1);
    if (!t || kn_krpmac_replay_check(t, data, size, ctr) != KN_KRPMAC_OK ||
        kn_krpmac_replay_check(t, data, size, ctr) != KN_KRPMAC_REPLAYED)
        abort();
    kn_krpmac_replay_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    verify_any(data, size);
    round_trip(data, size);
    return 0;
}
