/* Unit tests of the Gazebo Classic stream framer (protocols/gazebo_classic/gzc_frame.c):
 * one frame, coalesced frames, frames split at every byte, upper- and
 * lowercase headers, bad headers, the cap, stopping early, reset. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gzc_frame.h"
#include "harness_suite.h"

#define MAXGOT 64

static char got[MAXGOT][256];
static size_t gotlen[MAXGOT];
static int ngot;
static int stop_after;
static struct kn_gzc_framer fr;
static uint8_t store[64];

static bool collect(void *ctx, const uint8_t *p, size_t n)
{
    (void)ctx;
    ck_assert_int_lt(ngot, MAXGOT);
    ck_assert_uint_le(n, sizeof got[0]);
    memcpy(got[ngot], p, n);
    gotlen[ngot++] = n;
    return stop_after < 0 || ngot < stop_after;
}

static void setup(void)
{
    ngot = 0;
    stop_after = -1;
    kn_gzc_framer_init(&fr, store, sizeof store);
}

static size_t feed(const char *s, size_t n)
{
    return kn_gzc_framer_feed(&fr, (const uint8_t *)s, n, collect, NULL);
}

static void feeds(const char *s)
{
    ck_assert_uint_eq(feed(s, strlen(s)), strlen(s));
}

START_TEST(one_frame)
{
    feeds("00000005hello");
    ck_assert_int_eq(ngot, 1);
    ck_assert_uint_eq(gotlen[0], 5);
    ck_assert_mem_eq(got[0], "hello", 5);
    ck_assert_uint_eq(fr.frames, 1);
    ck_assert_uint_eq(fr.bytes, 5);
    ck_assert_int_eq(fr.err, KN_GZC_FRAME_OK);
}
END_TEST

START_TEST(coalesced_frames)
{
    /* Gazebo's writer appends small frames to one buffer */
    feeds("00000001a00000002bc0000000Adefghijklm00000003op");
    ck_assert_int_eq(ngot, 3);
    ck_assert_mem_eq(got[0], "a", 1);
    ck_assert_mem_eq(got[1], "bc", 2);
    ck_assert_uint_eq(gotlen[2], 10);
    ck_assert_mem_eq(got[2], "defghijklm", 10);
    feeds("q00000001r"); /* the end of "opq", then one more whole frame */
    ck_assert_int_eq(ngot, 5);
    ck_assert_mem_eq(got[3], "opq", 3);
    ck_assert_mem_eq(got[4], "r", 1);
}
END_TEST

START_TEST(split_at_every_byte)
{
    const char *s = "00000004abcd0000000bhello world00000001z";
    for (size_t i = 0; s[i]; i++)
        ck_assert_uint_eq(feed(s + i, 1), 1);
    ck_assert_int_eq(ngot, 3);
    ck_assert_mem_eq(got[0], "abcd", 4);
    ck_assert_uint_eq(gotlen[1], 11);
    ck_assert_mem_eq(got[1], "hello world", 11);
    ck_assert_mem_eq(got[2], "z", 1);
}
END_TEST

START_TEST(split_everywhere_two_parts)
{
    const char *s = "00000004abcd0000000bhello world";
    size_t n = strlen(s);
    for (size_t cut = 0; cut <= n; cut++) {
        setup();
        ck_assert_uint_eq(feed(s, cut), cut);
        ck_assert_uint_eq(feed(s + cut, n - cut), n - cut);
        ck_assert_int_eq(ngot, 2);
        ck_assert_mem_eq(got[0], "abcd", 4);
        ck_assert_mem_eq(got[1], "hello world", 11);
    }
}
END_TEST

START_TEST(uppercase_header)
{
    feeds("0000000Aabcdefghij");
    ck_assert_int_eq(ngot, 1);
    ck_assert_uint_eq(gotlen[0], 10);
}
END_TEST

START_TEST(bad_hex_stops)
{
    feeds("00000001x");
    size_t n = feed("0000000g12345678", 16);
    ck_assert_uint_eq(n, 8); /* the header was read, then refused */
    ck_assert_int_eq(fr.err, KN_GZC_FRAME_EHEX);
    ck_assert_uint_eq(fr.errors, 1);
    ck_assert_uint_eq(feed("00000001y", 9), 0); /* stopped: nothing more */
    ck_assert_int_eq(ngot, 1);
    kn_gzc_framer_reset(&fr);
    feeds("00000001y");
    ck_assert_int_eq(ngot, 2);
    ck_assert_uint_eq(fr.errors, 1);
}
END_TEST

START_TEST(signs_and_spaces_are_bad)
{
    const char *bad[] = { " 0000001", "-0000001", "+0000001", "0x000001", "0000 001" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setup();
        feed(bad[i], 8);
        ck_assert_int_eq(fr.err, KN_GZC_FRAME_EHEX);
    }
}
END_TEST

START_TEST(empty_frame_is_bad)
{
    feed("00000000", 8);
    ck_assert_int_eq(fr.err, KN_GZC_FRAME_EEMPTY);
    ck_assert_int_eq(ngot, 0);
}
END_TEST

START_TEST(cap)
{
    char frame[8 + 64 + 1];
    memset(frame + 8, 'q', 64);
    memcpy(frame, "00000040", 8);
    ck_assert_uint_eq(feed(frame, 8 + 64), 72); /* exactly the cap: fine */
    ck_assert_int_eq(ngot, 1);
    feed("00000041", 8);
    ck_assert_int_eq(fr.err, KN_GZC_FRAME_ETOOBIG);
    setup();
    feed("ffffffff", 8);
    ck_assert_int_eq(fr.err, KN_GZC_FRAME_ETOOBIG);
    ck_assert_str_eq(kn_gzc_frame_strerror(KN_GZC_FRAME_ETOOBIG), "frame longer than the limit");
}
END_TEST

START_TEST(cap_applies_to_split_frames)
{
    /* a frame that arrives in pieces is stored: the cap protects storage */
    char big[8 + 64];
    memcpy(big, "00000040", 8);
    memset(big + 8, 'r', 64);
    ck_assert_uint_eq(feed(big, 40), 40);
    ck_assert_uint_eq(feed(big + 40, 32), 32);
    ck_assert_int_eq(ngot, 1);
    ck_assert_uint_eq(gotlen[0], 64);
    ck_assert_int_eq(got[0][63], 'r');
}
END_TEST

START_TEST(stop_early)
{
    stop_after = 1;
    const char *s = "00000001a00000001b";
    ck_assert_uint_eq(feed(s, 18), 9);
    ck_assert_int_eq(ngot, 1);
    stop_after = -1;
    ck_assert_uint_eq(feed(s + 9, 9), 9);
    ck_assert_int_eq(ngot, 2);
    ck_assert_mem_eq(got[1], "b", 1);
}
END_TEST

START_TEST(reset_drops_partial)
{
    feeds("00000005hel");
    kn_gzc_framer_reset(&fr);
    feeds("00000002ok");
    ck_assert_int_eq(ngot, 1);
    ck_assert_mem_eq(got[0], "ok", 2);
}
END_TEST

START_TEST(header_encoding)
{
    char h[8];
    kn_gzc_frame_header(h, 42);
    ck_assert_mem_eq(h, "0000002a", 8);
    kn_gzc_frame_header(h, 0xffffffffu);
    ck_assert_mem_eq(h, "ffffffff", 8);
    kn_gzc_frame_header(h, 1);
    ck_assert_mem_eq(h, "00000001", 8);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("gazebo framer");
    TCase *tc = tcase_create("framer");
    tcase_add_checked_fixture(tc, setup, NULL);
    tcase_add_test(tc, one_frame);
    tcase_add_test(tc, coalesced_frames);
    tcase_add_test(tc, split_at_every_byte);
    tcase_add_test(tc, split_everywhere_two_parts);
    tcase_add_test(tc, uppercase_header);
    tcase_add_test(tc, bad_hex_stops);
    tcase_add_test(tc, signs_and_spaces_are_bad);
    tcase_add_test(tc, empty_frame_is_bad);
    tcase_add_test(tc, cap);
    tcase_add_test(tc, cap_applies_to_split_frames);
    tcase_add_test(tc, stop_early);
    tcase_add_test(tc, reset_drops_partial);
    tcase_add_test(tc, header_encoding);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
