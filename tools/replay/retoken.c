/* Session tokens rewritten in a controller replay: see retoken.h. */
#include "retoken.h"

#include <stdbool.h>
#include <string.h>

#include "krp.h"

/* Header flag bit 15, the shared-key trailer (docs/protocol.md, "Extension:
 * shared key"): the MAC covers the token, and the replay holds no key. */
#define SIGNED_FLAG 0x8000u

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The entry for hello_seq, made when missing (dropping the oldest when full). */
static size_t entry(struct kn_retoken *t, uint32_t hello_seq)
{
    for (size_t i = t->n; i-- > 0;)
        if (t->e[i].hello_seq == hello_seq)
            return i;
    if (t->n == KN_RETOKEN_MAX) {
        memmove(&t->e[0], &t->e[1], (KN_RETOKEN_MAX - 1) * sizeof t->e[0]);
        t->n--;
    }
    memset(&t->e[t->n], 0, sizeof t->e[0]);
    t->e[t->n].hello_seq = hello_seq;
    return t->n++;
}

void kn_retoken_captured(struct kn_retoken *t, uint32_t hello_seq, uint32_t token)
{
    size_t i = entry(t, hello_seq);
    t->e[i].cap = token;
    t->e[i].have_cap = true;
}

void kn_retoken_live(struct kn_retoken *t, uint32_t hello_seq, uint32_t token)
{
    size_t i = entry(t, hello_seq);
    t->e[i].live = token;
    t->e[i].have_live = true;
    t->e[i].kept = false;
}

/* Where d's token starts, or 0 when it carries none we may touch. */
static size_t token_at(const uint8_t *d, size_t len)
{
    if (len < KN_KRP_HDR_LEN + KN_KRP_LEN_TOKEN || d[0] != KN_KRP_MAGIC0 || d[1] != KN_KRP_MAGIC1 ||
        !kn_krp_is_to_robot(d[3]))
        return 0;
    unsigned flags = (unsigned)d[10] | ((unsigned)d[11] << 8);
    size_t plen = (size_t)d[8] | ((size_t)d[9] << 8);
    if (!(flags & KN_KRP_F_TOKEN) || (flags & SIGNED_FLAG) || plen < KN_KRP_LEN_TOKEN ||
        KN_KRP_HDR_LEN + plen > len)
        return 0;
    return KN_KRP_HDR_LEN + plen - KN_KRP_LEN_TOKEN;
}

enum kn_retoken_result kn_retoken_apply(const struct kn_retoken *t, uint8_t *d, size_t len)
{
    size_t at = token_at(d, len);
    if (!at)
        return KN_RETOKEN_NONE;
    uint32_t cap = get32(d + at);
    /* A HELLO with the token keeps the session and its token, so every
     * entry with this captured token maps to the same live one: take the
     * latest that has it (a HELLO with the token is sent before its own
     * HELLO_ACK comes). */
    bool known = false;
    for (size_t i = t->n; i-- > 0;) {
        if (!t->e[i].have_cap || t->e[i].cap != cap)
            continue;
        known = true;
        if (t->e[i].have_live) {
            put32(d + at, t->e[i].live);
            return t->e[i].kept ? KN_RETOKEN_KEPT : KN_RETOKEN_REWRITTEN;
        }
    }
    if (known)
        return KN_RETOKEN_WAIT;
    return KN_RETOKEN_UNKNOWN;
}

void kn_retoken_keep(struct kn_retoken *t, const uint8_t *d, size_t len)
{
    size_t at = token_at(d, len);
    if (!at)
        return;
    uint32_t cap = get32(d + at);
    for (size_t i = 0; i < t->n; i++) {
        if (t->e[i].have_cap && t->e[i].cap == cap && !t->e[i].have_live) {
            t->e[i].live = cap;
            t->e[i].have_live = t->e[i].kept = true;
        }
    }
}
