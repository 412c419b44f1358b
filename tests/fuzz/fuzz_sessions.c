/* libFuzzer target for the session rules (docs/protocol.md, "Sessions"):
 * the input is a run of datagrams from four senders (one a console), each
 * one byte of sender and time step, one byte of length, then its bytes.
 * Whatever arrives, the robot has at most one driver, a driver is a peer
 * it knows, only the driver's set-points reach the simulator, and every
 * answer the robot sends decodes. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "krp.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct kn_addr sender(unsigned k)
{
    struct kn_addr a;
    memset(&a, 0, sizeof a);
    struct sockaddr_in *s = (struct sockaddr_in *)&a.ss;
    s->sin_family = AF_INET;
    s->sin_port = htons((uint16_t)(30000 + k));
    s->sin_addr.s_addr = htonl(k == 3 ? 0x7f000002u : 0x7f000001u); /* 3: the console */
    a.len = sizeof *s;
    return a;
}

static void on_send(void *ctx, const struct kn_addr *to, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)to;
    struct kn_krp_msg m;
    if (kn_krp_decode(buf, len, &m) != KN_KRP_OK)
        abort();
}

static const struct kn_addr *last_from;
static struct kn_rules *R;

static void on_command(void *ctx, const struct kn_command *c, uint64_t t)
{
    (void)ctx;
    (void)c;
    (void)t;
    /* a set-point the rules applied came from the driver (or is a stop
     * the rules made themselves: watchdog, BYE, ESTOP, a release) */
    const struct kn_peer *d = kn_rules_driver(R);
    if (d && last_from && !kn_addr_equal(&d->addr, last_from) && c->belt_speed_m_s[0] != 0 &&
        c->flipper_mask == 0)
        abort();
}

static uint32_t rnd(void *ctx)
{
    static uint32_t x = 12345;
    (void)ctx;
    x = x * 1664525u + 1013904223u;
    return x;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct kn_rules_params p;
    memset(&p, 0, sizeof p);
    strcpy(p.name, "fuzz");
    p.counts_per_m = 4000;
    p.max_speed_mm_s = 800;
    p.flipper_min_cdeg = -11950;
    p.flipper_max_cdeg = 11950;
    p.watchdog_ms = 500;
    p.stale_ms = 500;
    p.max_peers = 3; /* small: the console may find the table full */
    p.consoles[0] = sender(3);
    ((struct sockaddr_in *)&p.consoles[0].ss)->sin_port = 0;
    p.n_consoles = 1;
    p.hello_to_drive = size > 0 && (data[0] & 1);
    struct kn_rules_io io = { .send = on_send, .command = on_command, .random32 = rnd };
    uint64_t now = 1000000000ull;
    R = kn_rules_new(&p, &io, now);
    if (!R)
        return 0;
    kn_rules_backend(R, true);
    struct kn_addr from[4];
    for (unsigned k = 0; k < 4; k++)
        from[k] = sender(k);
    size_t i = 1;
    while (i + 2 <= size) {
        unsigned who = data[i] & 3;
        now += (uint64_t)(data[i] >> 2) * 50000000ull; /* 0..3.15 s */
        size_t n = data[i + 1];
        i += 2;
        if (n > size - i)
            n = size - i;
        kn_rules_tick(R, now);
        last_from = &from[who];
        kn_rules_datagram(R, &from[who], data + i, n, now);
        last_from = NULL;
        i += n;
        const struct kn_peer *d = kn_rules_driver(R);
        if (d) { /* the driver is one of the senders, still in the table */
            unsigned k = 0;
            while (k < 4 && !kn_addr_equal(&d->addr, &from[k]))
                k++;
            if (k == 4 || !d->used)
                abort();
        }
    }
    kn_rules_free(R);
    R = NULL;
    return 0;
}
