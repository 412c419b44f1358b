/* Unit tests of the shared key's replay filter (protocols/krp_replay.h):
 * the freshness window's edges, a datagram (counter and MAC tag) taken
 * once however late it comes again, the floor a fresh filter starts with,
 * the floor eviction raises when the filter is full, expiry that still
 * refuses after the clock steps back, and arrivals out of order. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_suite.h"
#include "krp_replay.h"

#define NOW 1700000000000000ull /* 2023-11-14, in microseconds */
#define S 1000000ull

static const uint8_t tag_a[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t tag_b[8] = { 1, 2, 3, 4, 5, 6, 7, 9 };

static enum kn_krpreplay_verdict check(struct kn_krpreplay *f, uint64_t c, const uint8_t *tag,
                                       uint64_t now)
{
    return kn_krpreplay_check(f, c, tag, now);
}

START_TEST(window_edges)
{
    struct kn_krpreplay *f = kn_krpreplay_new(64, 0);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(check(f, NOW - KN_KRPREPLAY_PAST_US, tag_a, NOW), KN_KRPREPLAY_TOO_OLD);
    ck_assert_int_eq(check(f, NOW - KN_KRPREPLAY_PAST_US + 1, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW + KN_KRPREPLAY_FUTURE_US, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW + KN_KRPREPLAY_FUTURE_US + 1, tag_a, NOW), KN_KRPREPLAY_TOO_NEW);
    ck_assert_int_eq(check(f, UINT64_MAX, tag_a, NOW), KN_KRPREPLAY_TOO_NEW);
    ck_assert_int_eq(check(f, 0, tag_a, NOW), KN_KRPREPLAY_TOO_OLD);
    ck_assert_uint_eq(kn_krpreplay_held(f), 2);
    /* a clock near zero or near the end of time has no underflow */
    ck_assert_int_eq(check(f, 5, tag_a, 10), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, UINT64_MAX, tag_b, UINT64_MAX - 1), KN_KRPREPLAY_OK);
    kn_krpreplay_free(f);
    ck_assert_ptr_null(kn_krpreplay_new(0, 0));
    ck_assert_ptr_null(kn_krpreplay_new(SIZE_MAX / 2, 0));
}
END_TEST

/* The same counter and MAC twice: refused, from whatever sender, as long
 * as it is in the window; the same counter with another MAC (another
 * sender of the key, or another datagram) is another datagram. */
START_TEST(duplicate_pair)
{
    struct kn_krpreplay *f = kn_krpreplay_new(64, 0);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW), KN_KRPREPLAY_REPLAYED);
    ck_assert_int_eq(check(f, NOW, tag_b, NOW), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW, tag_b, NOW + 1), KN_KRPREPLAY_REPLAYED);
    ck_assert_int_eq(check(f, NOW - 1, tag_a, NOW), KN_KRPREPLAY_OK); /* older, unseen: fine */
    ck_assert_uint_eq(kn_krpreplay_held(f), 3);
    /* 29 s later it is still there */
    ck_assert_int_eq(check(f, NOW, tag_a, NOW + 29 * S), KN_KRPREPLAY_REPLAYED);
    /* 30 s after its counter it is too old, and held no more */
    ck_assert_int_eq(check(f, NOW, tag_a, NOW + 30 * S), KN_KRPREPLAY_TOO_OLD);
    ck_assert_uint_eq(kn_krpreplay_held(f), 0);
    ck_assert_uint_eq(kn_krpreplay_evicted(f), 0);
    kn_krpreplay_free(f);
}
END_TEST

/* A filter that starts afresh (a daemon started or restarted) refuses
 * everything signed up to its start, so nothing recorded before can
 * pass, and takes what is signed after. */
START_TEST(restart_floor)
{
    struct kn_krpreplay *f = kn_krpreplay_new(64, NOW);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW);
    ck_assert_int_eq(check(f, NOW - 2 * S, tag_a, NOW + 1), KN_KRPREPLAY_FLOOR);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW + 1), KN_KRPREPLAY_FLOOR);
    ck_assert_int_eq(check(f, NOW + 1, tag_a, NOW + 1), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW + 1, tag_a, NOW + 2), KN_KRPREPLAY_REPLAYED);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW);
    kn_krpreplay_free(f);
}
END_TEST

/* Full: the smallest counter leaves and becomes the floor, so what it was
 * can never be taken again even though it is no longer held. */
START_TEST(floor_after_eviction)
{
    struct kn_krpreplay *f = kn_krpreplay_new(4, 0);
    for (uint64_t i = 0; i < 4; i++)
        ck_assert_int_eq(check(f, NOW + i * 10, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_uint_eq(kn_krpreplay_held(f), 4);
    ck_assert_int_eq(check(f, NOW + 40, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_uint_eq(kn_krpreplay_evicted(f), 1);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW);
    ck_assert_uint_eq(kn_krpreplay_held(f), 4);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW), KN_KRPREPLAY_FLOOR);         /* the evicted one */
    ck_assert_int_eq(check(f, NOW, tag_b, NOW), KN_KRPREPLAY_FLOOR);         /* at the floor */
    ck_assert_int_eq(check(f, NOW + 10, tag_a, NOW), KN_KRPREPLAY_REPLAYED); /* still held */
    /* one in the middle: the smallest (NOW + 10) leaves for it */
    ck_assert_int_eq(check(f, NOW + 15, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW + 10);
    ck_assert_int_eq(check(f, NOW + 10, tag_a, NOW), KN_KRPREPLAY_FLOOR);
    ck_assert_int_eq(check(f, NOW + 15, tag_a, NOW), KN_KRPREPLAY_REPLAYED);
    /* a new one that would be the smallest: the smallest held leaves,
     * and the new one is at or below the raised floor */
    ck_assert_int_eq(check(f, NOW + 12, tag_a, NOW), KN_KRPREPLAY_FLOOR);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW + 15);
    ck_assert_uint_eq(kn_krpreplay_evicted(f), 3);
    ck_assert_int_eq(check(f, NOW + 20, tag_a, NOW), KN_KRPREPLAY_REPLAYED);
    ck_assert_int_eq(check(f, NOW + 30, tag_a, NOW), KN_KRPREPLAY_REPLAYED);
    ck_assert_int_eq(check(f, NOW + 40, tag_a, NOW), KN_KRPREPLAY_REPLAYED);
    ck_assert_uint_eq(kn_krpreplay_held(f), 3);
    kn_krpreplay_free(f);
}
END_TEST

/* What expired is refused even if the receiver's clock steps back to
 * when it was fresh. */
START_TEST(expired_stays_refused)
{
    struct kn_krpreplay *f = kn_krpreplay_new(64, 0);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW), KN_KRPREPLAY_OK);
    ck_assert_int_eq(check(f, NOW + 31 * S, tag_a, NOW + 31 * S), KN_KRPREPLAY_OK);
    ck_assert_uint_eq(kn_krpreplay_held(f), 1);
    ck_assert_uint_eq(kn_krpreplay_floor(f), NOW);
    ck_assert_int_eq(check(f, NOW, tag_a, NOW), KN_KRPREPLAY_FLOOR); /* clock back by 31 s */
    ck_assert_int_eq(check(f, NOW + 31 * S, tag_a, NOW), KN_KRPREPLAY_TOO_NEW);
    ck_assert_int_eq(check(f, NOW + 31 * S, tag_a, NOW + 31 * S), KN_KRPREPLAY_REPLAYED);
    ck_assert_uint_eq(kn_krpreplay_evicted(f), 0); /* expiry is not eviction */
    kn_krpreplay_free(f);
}
END_TEST

/* Many senders a little apart: any order of arrival, each datagram taken
 * once, every one of them found again, and a full ring that wrapped. */
START_TEST(out_of_order)
{
    enum { N = 3000, CAP = 1024 };
    static uint64_t c[N];
    for (int i = 0; i < N; i++)
        c[i] = NOW + (uint64_t)i * 7;
    srand(12345);
    for (int i = N - 1; i > 0; i--) { /* shuffled only within 64 places */
        int j = i - rand() % (i < 64 ? i + 1 : 64);
        uint64_t t = c[i];
        c[i] = c[j];
        c[j] = t;
    }
    struct kn_krpreplay *f = kn_krpreplay_new(CAP, 0);
    int ok = 0, floor = 0;
    for (int i = 0; i < N; i++) {
        uint8_t tag[8];
        memcpy(tag, &c[i], sizeof tag);
        enum kn_krpreplay_verdict v = check(f, c[i], tag, NOW);
        ck_assert(v == KN_KRPREPLAY_OK || v == KN_KRPREPLAY_FLOOR);
        ok += v == KN_KRPREPLAY_OK;
        floor += v == KN_KRPREPLAY_FLOOR;
        ck_assert_int_eq(check(f, c[i], tag, NOW),
                         v == KN_KRPREPLAY_OK ? KN_KRPREPLAY_REPLAYED : KN_KRPREPLAY_FLOOR);
    }
    ck_assert_int_eq(ok + floor, N);
    ck_assert_int_ge(ok, N - 64); /* only one arriving after its far newer neighbours */
    ck_assert_uint_eq(kn_krpreplay_held(f), CAP);
    /* every one, again: none taken twice */
    for (int i = 0; i < N; i++) {
        uint8_t tag[8];
        memcpy(tag, &c[i], sizeof tag);
        enum kn_krpreplay_verdict v = check(f, c[i], tag, NOW);
        ck_assert(v == KN_KRPREPLAY_REPLAYED || v == KN_KRPREPLAY_FLOOR);
    }
    ck_assert_uint_eq(kn_krpreplay_held(f), CAP);
    kn_krpreplay_free(f);
}
END_TEST

START_TEST(verdict_names)
{
    ck_assert_str_eq(kn_krpreplay_verdict_name(KN_KRPREPLAY_OK), "ok");
    ck_assert_str_eq(kn_krpreplay_verdict_name(KN_KRPREPLAY_REPLAYED), "replayed");
    ck_assert_str_eq(kn_krpreplay_verdict_name(KN_KRPREPLAY_TOO_OLD), "too old");
    ck_assert_str_eq(kn_krpreplay_verdict_name(KN_KRPREPLAY_TOO_NEW), "too new");
    ck_assert_str_eq(kn_krpreplay_verdict_name(KN_KRPREPLAY_FLOOR), "below the floor");
    ck_assert_str_eq(kn_krpreplay_verdict_name((enum kn_krpreplay_verdict)99), "?");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("krp-replay");
    TCase *tc = tcase_create("krp-replay");
    tcase_add_test(tc, window_edges);
    tcase_add_test(tc, duplicate_pair);
    tcase_add_test(tc, restart_floor);
    tcase_add_test(tc, floor_after_eviction);
    tcase_add_test(tc, expired_stays_refused);
    tcase_add_test(tc, out_of_order);
    tcase_add_test(tc, verdict_names);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
