/* Peer table: see peers.h. Slots live in blocks of KN_PEERS_BLOCK, each
 * allocated the first time a peer needs one of its slots and kept until
 * the table goes, so a slot never moves; hash chains and the recency list
 * are index links. Slots are taken from the front (`fresh`), freed ones
 * chained for reuse: a robot with one controller holds one block (4 KiB),
 * not the whole table (256 slots, 68 KiB per robot). */
#include "peers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostport.h"

bool kn_addr_equal(const struct kn_addr *a, const struct kn_addr *b)
{
    if (a->ss.ss_family != b->ss.ss_family)
        return false;
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)&a->ss;
        const struct sockaddr_in *y = (const struct sockaddr_in *)&b->ss;
        return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
    if (a->ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a->ss;
        const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)&b->ss;
        return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
               memcmp(&x->sin6_addr, &y->sin6_addr, sizeof x->sin6_addr) == 0;
    }
    return false;
}

bool kn_addr_match(const struct kn_addr *pattern, const struct kn_addr *a)
{
    struct kn_addr any = *a;
    if (pattern->ss.ss_family == AF_INET &&
        ((const struct sockaddr_in *)&pattern->ss)->sin_port == 0)
        ((struct sockaddr_in *)&any.ss)->sin_port = 0;
    else if (pattern->ss.ss_family == AF_INET6 &&
             ((const struct sockaddr_in6 *)&pattern->ss)->sin6_port == 0)
        ((struct sockaddr_in6 *)&any.ss)->sin6_port = 0;
    return kn_addr_equal(pattern, &any);
}

static uint32_t fnv(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;
    }
    return h;
}

uint32_t kn_addr_hash(const struct kn_addr *a)
{
    uint32_t h = 2166136261u;
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)&a->ss;
        h = fnv(h, &x->sin_port, sizeof x->sin_port);
        h = fnv(h, &x->sin_addr, sizeof x->sin_addr);
    } else if (a->ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a->ss;
        h = fnv(h, &x->sin6_port, sizeof x->sin6_port);
        h = fnv(h, &x->sin6_addr, sizeof x->sin6_addr);
    }
    return h;
}

void kn_addr_format(const struct kn_addr *a, char *buf, size_t len)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (len == 0)
        return;
    if (a->ss.ss_family == AF_INET) {
        const struct sockaddr_in *x = (const struct sockaddr_in *)&a->ss;
        inet_ntop(AF_INET, &x->sin_addr, ip, sizeof ip);
        kn_hostport_format(ip, ntohs(x->sin_port), buf, len);
    } else if (a->ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a->ss;
        inet_ntop(AF_INET6, &x->sin6_addr, ip, sizeof ip);
        kn_hostport_format(ip, ntohs(x->sin6_port), buf, len);
    } else {
        snprintf(buf, len, "?");
    }
}

int kn_addr_set(struct kn_addr *a, const struct sockaddr *sa)
{
    memset(a, 0, sizeof *a);
    if (sa->sa_family == AF_INET)
        a->len = sizeof(struct sockaddr_in);
    else if (sa->sa_family == AF_INET6)
        a->len = sizeof(struct sockaddr_in6);
    else
        return -1;
    memcpy(&a->ss, sa, a->len);
    return 0;
}

int kn_peers_init(struct kn_peers *t, uint32_t cap)
{
    memset(t, 0, sizeof *t);
    if (cap == 0)
        return -1;
    t->nbuckets = 1;
    while (t->nbuckets < 2 * cap)
        t->nbuckets <<= 1;
    t->block = calloc((cap + KN_PEERS_BLOCK - 1) / KN_PEERS_BLOCK, sizeof(struct kn_peer *));
    t->bucket = malloc(t->nbuckets * sizeof *t->bucket);
    if (!t->block || !t->bucket) {
        kn_peers_free(t);
        return -1;
    }
    for (uint32_t i = 0; i < t->nbuckets; i++)
        t->bucket[i] = -1;
    t->cap = cap;
    t->newest = t->oldest = -1;
    t->free_head = -1;
    t->fresh = 0;
    return 0;
}

void kn_peers_free(struct kn_peers *t)
{
    if (t->block)
        for (uint32_t b = 0; b * KN_PEERS_BLOCK < t->fresh; b++)
            free(t->block[b]);
    free(t->block);
    free(t->bucket);
    t->block = NULL;
    t->bucket = NULL;
    t->cap = t->used = t->fresh = 0;
}

struct kn_peer *kn_peers_at(const struct kn_peers *t, int32_t i)
{
    return &t->block[(uint32_t)i / KN_PEERS_BLOCK][(uint32_t)i % KN_PEERS_BLOCK];
}

static int32_t idx(const struct kn_peers *t, const struct kn_peer *p)
{
    (void)t;
    return p->index;
}

struct kn_peer *kn_peers_find(struct kn_peers *t, const struct kn_addr *a)
{
    int32_t i = t->bucket[kn_addr_hash(a) & (t->nbuckets - 1)];
    while (i >= 0) {
        struct kn_peer *p = kn_peers_at(t, i);
        if (kn_addr_equal(&p->addr, a))
            return p;
        i = p->hnext;
    }
    return NULL;
}

static void list_unlink(struct kn_peers *t, struct kn_peer *p)
{
    if (p->newer >= 0)
        kn_peers_at(t, p->newer)->older = p->older;
    else
        t->newest = p->older;
    if (p->older >= 0)
        kn_peers_at(t, p->older)->newer = p->newer;
    else
        t->oldest = p->newer;
    p->newer = p->older = -1;
}

static void list_push_newest(struct kn_peers *t, struct kn_peer *p)
{
    int32_t i = idx(t, p);
    p->newer = -1;
    p->older = t->newest;
    if (t->newest >= 0)
        kn_peers_at(t, t->newest)->newer = i;
    t->newest = i;
    if (t->oldest < 0)
        t->oldest = i;
}

struct kn_peer *kn_peers_add(struct kn_peers *t, const struct kn_addr *a)
{
    int32_t i;
    if (t->free_head >= 0) {
        i = t->free_head;
        t->free_head = kn_peers_at(t, i)->hnext;
    } else if (t->fresh < t->cap) {
        uint32_t b = t->fresh / KN_PEERS_BLOCK;
        if (t->fresh % KN_PEERS_BLOCK == 0 &&
            !(t->block[b] = calloc(KN_PEERS_BLOCK, sizeof *t->block[b])))
            return NULL; /* out of memory: as full */
        i = (int32_t)t->fresh++;
    } else {
        return NULL;
    }
    struct kn_peer *p = kn_peers_at(t, i);
    memset(p, 0, sizeof *p);
    p->index = i;
    p->addr = *a;
    p->used = true;
    uint32_t b = kn_addr_hash(a) & (t->nbuckets - 1);
    p->hnext = t->bucket[b];
    t->bucket[b] = i;
    list_push_newest(t, p);
    t->used++;
    return p;
}

void kn_peers_touch(struct kn_peers *t, struct kn_peer *p)
{
    if (t->newest == idx(t, p))
        return;
    list_unlink(t, p);
    list_push_newest(t, p);
}

struct kn_peer *kn_peers_oldest(struct kn_peers *t)
{
    return t->oldest >= 0 ? kn_peers_at(t, t->oldest) : NULL;
}

void kn_peers_remove(struct kn_peers *t, struct kn_peer *p)
{
    int32_t i = idx(t, p);
    uint32_t b = kn_addr_hash(&p->addr) & (t->nbuckets - 1);
    int32_t *link = &t->bucket[b];
    while (*link >= 0 && *link != i)
        link = &kn_peers_at(t, *link)->hnext;
    if (*link == i)
        *link = p->hnext;
    list_unlink(t, p);
    p->used = false;
    p->hnext = t->free_head;
    t->free_head = i;
    t->used--;
}

struct kn_peer *kn_peers_next(struct kn_peers *t, uint32_t *i)
{
    while (*i < t->fresh) {
        struct kn_peer *p = kn_peers_at(t, (int32_t)(*i)++);
        if (p->used)
            return p;
    }
    return NULL;
}
