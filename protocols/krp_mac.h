/* KRP/1 shared-key extension (docs/protocol.md, "Extension: shared key"):
 * a datagram with header flag MAC carries a 44-byte trailer after its
 * payload, outside the header's length: key id, counter, HMAC-SHA256 of
 * everything before the MAC. No I/O: sign a datagram in place, verify and
 * strip one, and the signers' counter; what refuses a datagram played
 * again is krp_replay.h. HMAC and SHA-256 are nettle's. */
#ifndef KN_KRP_MAC_H
#define KN_KRP_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/hmac.h>

#define KN_KRPMAC_F_MAC 0x8000u   /* header flag: a trailer follows the payload */
#define KN_KRPMAC_CAP_KEY 0x0020u /* HELLO_ACK capability bit 5: knows the extension */
#define KN_KRPMAC_ID_LEN 4
#define KN_KRPMAC_MAC_LEN 32
#define KN_KRPMAC_TRAILER (KN_KRPMAC_ID_LEN + 8 + KN_KRPMAC_MAC_LEN) /* 44 */
#include "keyfile.h"
#define KN_KRPMAC_KEY_MIN KN_KEYFILE_MIN
#define KN_KRPMAC_KEY_MAX KN_KEYFILE_MAX

struct kn_krpmac_key {
    uint8_t id[KN_KRPMAC_ID_LEN]; /* first 4 bytes of SHA-256(key) */
    struct hmac_sha256_ctx ctx;   /* keyed once; copied per datagram */
};

/* Key the HMAC. len is KN_KRPMAC_KEY_MIN..KN_KRPMAC_KEY_MAX (else -1). */
int kn_krpmac_key_set(struct kn_krpmac_key *k, const uint8_t *key, size_t len);

/* Sign the datagram buf[0..len) in place: set flag MAC in its header and
 * append the trailer with `counter`. Returns the new length, or 0 when len
 * is under 12 or cap under len + 44. */
size_t kn_krpmac_sign(const struct kn_krpmac_key *k, uint64_t counter, uint8_t *buf, size_t len,
                      size_t cap);

enum kn_krpmac_verdict {
    KN_KRPMAC_OK = 0,
    KN_KRPMAC_MISSING,  /* no flag MAC (or not even a KRP/1 header) */
    KN_KRPMAC_BAD,      /* flag set but trailer misplaced, other key id, or MAC wrong */
    KN_KRPMAC_REPLAYED, /* the caller's own check: counter not above the last */
};

/* Check a datagram: OK strips the trailer (*len -= 44), clears the flag
 * and gives the counter; any other verdict leaves buf as it was. */
enum kn_krpmac_verdict kn_krpmac_verify(const struct kn_krpmac_key *k, uint8_t *buf, size_t *len,
                                        uint64_t *counter);

/* Undo what an OK verify did to buf, whose verified length was plain_len:
 * the flag MAC set again (the trailer never moved). Returns the signed
 * length, plain_len + KN_KRPMAC_TRAILER. For a datagram verified but then
 * refused (a replay), so that what is kept of it is what arrived. */
size_t kn_krpmac_unverify(uint8_t *buf, size_t plain_len);

/* Short English name of a verdict ("missing", "bad", ...). */
const char *kn_krpmac_verdict_name(enum kn_krpmac_verdict v);

/* The MAC of a datagram verified OK to plain_len bytes: still in buf,
 * after the stripped trailer's key id and counter. */
const uint8_t *kn_krpmac_mac(const uint8_t *buf, size_t plain_len);

/* A signer's next counter after last: its wall clock in microseconds
 * since 1970 (unix_us), or last + 1 when that is not above last. So
 * counters never repeat, a restarted signer starts above what it sent
 * before, and a long-running one stays near real time, which the
 * receiver's freshness window (krp_replay.h) asks for. */
uint64_t kn_krpmac_counter_next(uint64_t last, int64_t unix_us);

#endif
