/* KRP/1 shared-key trailer: sign, verify and the signers' counter (krp_mac.h).
 * The HMAC is nettle's; the MAC comparison is nettle's constant-time one
 * so timing tells nothing about how many bytes of a forged MAC matched. */
#include "krp_mac.h"

#include <string.h>

#include <nettle/memops.h>
#include <nettle/sha2.h>

#define HDR 12

int kn_krpmac_key_set(struct kn_krpmac_key *k, const uint8_t *key, size_t len)
{
    if (len < KN_KRPMAC_KEY_MIN || len > KN_KRPMAC_KEY_MAX)
        return -1;
    struct sha256_ctx h;
    uint8_t d[SHA256_DIGEST_SIZE];
    sha256_init(&h);
    sha256_update(&h, len, key);
    sha256_digest(&h, sizeof d, d);
    memcpy(k->id, d, sizeof k->id);
    hmac_sha256_set_key(&k->ctx, len, key);
    return 0;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* HMAC-SHA256 of buf[0..n) with a copy of the keyed context, so one key
 * serves threads and callers at once. */
static void mac(const struct kn_krpmac_key *k, const uint8_t *buf, size_t n, uint8_t *out)
{
    struct hmac_sha256_ctx c = k->ctx;
    hmac_sha256_update(&c, n, buf);
    hmac_sha256_digest(&c, KN_KRPMAC_MAC_LEN, out);
}

size_t kn_krpmac_sign(const struct kn_krpmac_key *k, uint64_t counter, uint8_t *buf, size_t len,
                      size_t cap)
{
    if (len < HDR || cap < len + KN_KRPMAC_TRAILER)
        return 0;
    buf[11] |= (uint8_t)(KN_KRPMAC_F_MAC >> 8);
    uint8_t *t = buf + len;
    memcpy(t, k->id, KN_KRPMAC_ID_LEN);
    put_u64(t + KN_KRPMAC_ID_LEN, counter);
    size_t covered = len + KN_KRPMAC_ID_LEN + 8;
    mac(k, buf, covered, buf + covered);
    return covered + KN_KRPMAC_MAC_LEN;
}

enum kn_krpmac_verdict kn_krpmac_verify(const struct kn_krpmac_key *k, uint8_t *buf, size_t *len,
                                        uint64_t *counter)
{
    size_t n = *len;
    if (n < HDR || buf[0] != 0x4B || buf[1] != 0x4E || !(buf[11] & (KN_KRPMAC_F_MAC >> 8)))
        return KN_KRPMAC_MISSING;
    /* The trailer sits right after the payload the header announces, and
     * ends the datagram. */
    size_t payload = (size_t)buf[8] | (size_t)buf[9] << 8;
    if (n != HDR + payload + KN_KRPMAC_TRAILER)
        return KN_KRPMAC_BAD;
    const uint8_t *t = buf + HDR + payload;
    if (memcmp(t, k->id, KN_KRPMAC_ID_LEN) != 0)
        return KN_KRPMAC_BAD;
    uint8_t want[KN_KRPMAC_MAC_LEN];
    size_t covered = n - KN_KRPMAC_MAC_LEN;
    mac(k, buf, covered, want);
    if (!memeql_sec(want, buf + covered, KN_KRPMAC_MAC_LEN))
        return KN_KRPMAC_BAD;
    *counter = get_u64(t + KN_KRPMAC_ID_LEN);
    buf[11] &= (uint8_t) ~(KN_KRPMAC_F_MAC >> 8);
    *len = HDR + payload;
    return KN_KRPMAC_OK;
}

size_t kn_krpmac_unverify(uint8_t *buf, size_t plain_len)
{
    buf[11] |= (uint8_t)(KN_KRPMAC_F_MAC >> 8);
    return plain_len + KN_KRPMAC_TRAILER;
}

const char *kn_krpmac_verdict_name(enum kn_krpmac_verdict v)
{
    switch (v) {
    case KN_KRPMAC_OK: return "ok";
    case KN_KRPMAC_MISSING: return "missing";
    case KN_KRPMAC_BAD: return "bad";
    case KN_KRPMAC_REPLAYED: return "replayed";
    }
    return "?";
}

const uint8_t *kn_krpmac_mac(const uint8_t *buf, size_t plain_len)
{
    return buf + plain_len + KN_KRPMAC_ID_LEN + 8;
}

uint64_t kn_krpmac_counter_next(uint64_t last, int64_t unix_us)
{
    uint64_t now = unix_us > 0 ? (uint64_t)unix_us : 0;
    return now > last ? now : last + 1;
}
