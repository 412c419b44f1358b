/* KRP/1 shared-key extension (docs/protocol.md, "Extension: shared key"):
 * a datagram with header flag MAC carries a 44-byte trailer after its
 * payload, outside the header's length: key id, counter, HMAC-SHA256 of
 * everything before the MAC. No I/O: sign a datagram in place, verify and
 * strip one, and a per-sender table of the highest counter seen so a
 * recorded datagram cannot be played again. HMAC and SHA-256 are nettle's. */
#ifndef KN_KRP_MAC_H
#define KN_KRP_MAC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nettle/hmac.h>

#define KN_KRPMAC_F_MAC 0x8000u  /* header flag: a trailer follows the payload */
#define KN_KRPMAC_CAP_KEY 0x0020u /* HELLO_ACK capability bit 5: knows the extension */
#define KN_KRPMAC_ID_LEN 4
#define KN_KRPMAC_MAC_LEN 32
#define KN_KRPMAC_TRAILER (KN_KRPMAC_ID_LEN + 8 + KN_KRPMAC_MAC_LEN) /* 44 */
#include "keyfile.h"
#define KN_KRPMAC_KEY_MIN KN_KEYFILE_MIN
#define KN_KRPMAC_KEY_MAX KN_KEYFILE_MAX

struct kn_krpmac_key {
    uint8_t id[KN_KRPMAC_ID_LEN];  /* first 4 bytes of SHA-256(key) */
    struct hmac_sha256_ctx ctx;    /* keyed once; copied per datagram */
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
    KN_KRPMAC_MISSING,   /* no flag MAC (or not even a KRP/1 header) */
    KN_KRPMAC_BAD,       /* flag set but trailer misplaced, other key id, or MAC wrong */
    KN_KRPMAC_REPLAYED,  /* from kn_krpmac_replay_check: counter not above the last */
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

/* First counter of a sender: its wall clock in microseconds, so a restarted
 * sender starts above what it sent before (at under 10^6 datagrams/s). */
uint64_t kn_krpmac_counter_start(int64_t unix_us);

/* Highest counter per sender (an opaque address of up to
 * KN_KRPMAC_ADDR_MAX bytes); when full, the sender heard from least
 * recently is forgotten to make room (counted). */
#define KN_KRPMAC_ADDR_MAX 32
struct kn_krpmac_replay;
struct kn_krpmac_replay *kn_krpmac_replay_new(size_t cap);
void kn_krpmac_replay_free(struct kn_krpmac_replay *t);
/* OK (and remembers counter) when counter is above the last one from
 * addr, or addr is new; REPLAYED otherwise. Call only after verify. */
enum kn_krpmac_verdict kn_krpmac_replay_check(struct kn_krpmac_replay *t, const void *addr,
                                              size_t addrlen, uint64_t counter);
uint64_t kn_krpmac_replay_forgotten(const struct kn_krpmac_replay *t);

#endif
