/* What the shared key costs per datagram, in this process, no I/O: a
 * CRAWLER encoded, signed, verified and decoded (protocols/krp_mac) against
 * the same CRAWLER encoded and decoded alone, the unsigned path every
 * datagram takes anyway. The two take turns batch by batch so machine
 * noise falls on both; the ratio is what a keyed robot pays over a plain
 * one in codec work. */
#include "bench.h"

#include <math.h>
#include <stdio.h>

#include "krp.h"
#ifdef KN_HAVE_KEYS
#include "krp_mac.h"
#endif

#define BATCH 1000

#ifdef KN_HAVE_KEYS
/* One datagram's trip: encode (then sign and verify), decode. The sink
 * keeps the compiler from dropping the work. false on a functional error. */
static bool one(const struct kn_krpmac_key *k, uint64_t i, bool keyed, volatile int32_t *sink)
{
    struct kn_krp_msg m, out;
    uint8_t buf[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    kn_krp_init(&m, KN_KRP_CRAWLER, (uint32_t)i + 1, KN_KRP_F_ACK_REQ);
    m.u.crawler.left_mm_s = (int32_t)(i % 800);
    m.u.crawler.right_mm_s = -(int32_t)(i % 700);
    size_t n = kn_krp_encode(&m, buf, KN_KRP_MAX_DGRAM);
    if (keyed) {
        uint64_t ctr = 0;
        n = kn_krpmac_sign(k, i + 1, buf, n, sizeof buf);
        if (n == 0 || kn_krpmac_verify(k, buf, &n, &ctr) != KN_KRPMAC_OK || ctr != i + 1)
            return false;
    }
    if (kn_krp_decode(buf, n, &out) != KN_KRP_OK)
        return false;
    *sink = out.u.crawler.left_mm_s;
    return true;
}
#endif

int kn_bench_keycost(const struct kn_bench_opts *o, cJSON *root)
{
#ifdef KN_HAVE_KEYS
    struct kn_krpmac_key k;
    uint8_t raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] = (uint8_t)(0xa5 ^ i);
    if (kn_krpmac_key_set(&k, raw, sizeof raw) != 0) {
        fprintf(stderr, "kenaf-bench: keycost: cannot set a 32-byte key\n");
        return -1;
    }
    fprintf(stderr, "shared-key cost per datagram...\n");
    /* the library-call count, scaled: codec calls are ~100x cheaper */
    uint64_t batches = (uint64_t)(o->libcost_calls / 20);
    if (batches < 20)
        batches = 20;
    struct kn_bench_samples plain = { 0 }, keyed = { 0 };
    volatile int32_t sink = 0;
    uint64_t i = 0, failed = 0;
    for (uint64_t b = 0; b < 2 * batches; b++) {
        bool with_key = b & 1;
        uint64_t t0 = kn_bench_now_ns();
        for (int j = 0; j < BATCH; j++)
            failed += !one(&k, i++, with_key, &sink);
        /* a batch's ns over 1000 datagrams reads as ns per datagram in the
         * summary's "us" fields */
        kn_bench_samples_add(with_key ? &keyed : &plain, kn_bench_now_ns() - t0);
    }
    struct kn_bench_summary ks = kn_bench_summarize(&keyed), ps = kn_bench_summarize(&plain);
    kn_bench_samples_free(&keyed);
    kn_bench_samples_free(&plain);
    if (failed) {
        fprintf(stderr, "kenaf-bench: keycost: %llu datagrams did not sign, verify or decode\n",
                (unsigned long long)failed);
        return -1;
    }
    double ratio = ks.p50_us / ps.p50_us;
    cJSON *j = cJSON_AddObjectToObject(root, "keycost");
    cJSON *targets = cJSON_AddArrayToObject(j, "targets");
    cJSON_AddNumberToObject(j, "datagrams", (double)(2 * batches * BATCH));
    cJSON_AddNumberToObject(j, "batch", BATCH);
    const char *names[] = { "signed_ns", "plain_ns" };
    const struct kn_bench_summary *s[] = { &ks, &ps };
    for (int x = 0; x < 2; x++) {
        cJSON *e = cJSON_AddObjectToObject(j, names[x]);
        cJSON_AddNumberToObject(e, "p50", round(s[x]->p50_us * 1000) / 1000);
        cJSON_AddNumberToObject(e, "p99", round(s[x]->p99_us * 1000) / 1000);
        cJSON_AddNumberToObject(e, "mean", round(s[x]->mean_us * 1000) / 1000);
    }
    cJSON_AddNumberToObject(j, "ratio_p50", isfinite(ratio) ? round(ratio * 100) / 100 : 0);
    cJSON_AddNumberToObject(j, "added_p50_ns", round((ks.p50_us - ps.p50_us) * 1000) / 1000);
    /* the key's work must stay far below a 1 kHz control period */
    kn_bench_row_target(targets, "sign+verify+codec", "p50 ns/datagram (batch mean)", ks.p50_us,
                        "codec", ps.p50_us, KN_BENCH_LE, 10000, "ns");
    kn_bench_row("sign+verify+codec", "p99 ns/datagram (batch mean)", ks.p99_us, "codec",
                 ps.p99_us);
    return 0;
#else
    (void)o, (void)root;
    fprintf(stderr,
            "kenaf-bench: keycost: built without shared-key support (-Dkeys, nettle-dev)\n");
    return -1;
#endif
}
