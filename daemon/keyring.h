/* The replay filters of kenaf-simd's shared keys (docs/protocol.md,
 * "Counters and replay"): one per key, shared by every robot configured
 * with that key, so a signed datagram is taken at most once whichever
 * robot, port or session it is sent to. A filter lives as long as a robot
 * holds it: a robot that a SIGHUP restarts with the same key takes the
 * filter before the old robot lets go of it (that happens once the old
 * one's socket has closed, on a later turn of the loop), so the state
 * survives the reload; a new key gets a new filter. */
#ifndef KN_KEYRING_H
#define KN_KEYRING_H

#include <stddef.h>
#include <stdint.h>

#include "krp_replay.h"

/* The filter of key[0..len), made (its floor at now_us, the wall clock in
 * microseconds since 1970) when no robot holds one; one more holder. NULL
 * when out of memory. */
struct kn_krpreplay *kn_keyring_get(const uint8_t *key, size_t len, uint64_t now_us);
/* One holder less; the last one frees the filter. NULL is ignored. */
void kn_keyring_put(struct kn_krpreplay *f);

#endif
