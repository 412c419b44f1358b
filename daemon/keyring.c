/* The daemon's replay filters, one per key (keyring.h). Keys are told
 * apart by their SHA-256, so the ring keeps no second copy of a secret.
 * Only the loop's thread calls in: no lock. */
#include "keyring.h"

#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>

struct ring_entry {
    struct ring_entry *next;
    uint8_t digest[SHA256_DIGEST_SIZE];
    struct kn_krpreplay *filter;
    unsigned holders;
};

static struct ring_entry *ring;

struct kn_krpreplay *kn_keyring_get(const uint8_t *key, size_t len, uint64_t now_us)
{
    uint8_t d[SHA256_DIGEST_SIZE];
    struct sha256_ctx h;
    sha256_init(&h);
    sha256_update(&h, len, key);
    sha256_digest(&h, sizeof d, d);
    for (struct ring_entry *e = ring; e; e = e->next) {
        if (memcmp(e->digest, d, sizeof d) == 0) {
            e->holders++;
            return e->filter;
        }
    }
    struct ring_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->filter = kn_krpreplay_new(KN_KRPREPLAY_CAP, now_us);
    if (!e->filter) {
        free(e);
        return NULL;
    }
    memcpy(e->digest, d, sizeof d);
    e->holders = 1;
    e->next = ring;
    ring = e;
    return e->filter;
}

void kn_keyring_put(struct kn_krpreplay *f)
{
    if (!f)
        return;
    for (struct ring_entry **p = &ring; *p; p = &(*p)->next) {
        struct ring_entry *e = *p;
        if (e->filter != f)
            continue;
        if (--e->holders == 0) {
            *p = e->next;
            kn_krpreplay_free(e->filter);
            free(e);
        }
        return;
    }
}
