/* Unit tests of the shared-key trailer (protocols/krp_mac.h): two golden
 * datagrams written byte by byte from docs/protocol.md "Extension: shared
 * key" (their key ids and MACs computed with another HMAC-SHA256
 * implementation), every byte of a signed datagram guarded, misplaced
 * trailers, key files (text and owner/mode rule), and the counter. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_suite.h"
#include "keyfile.h"
#include "krp.h"
#include "krp_mac.h"

/* Key 00 01 02 ... 1f: key id 63 0d cd 29 (SHA-256 of the key). */
static void test_key(struct kn_krpmac_key *k)
{
    uint8_t raw[32];
    for (int i = 0; i < 32; i++)
        raw[i] = (uint8_t)i;
    ck_assert_int_eq(kn_krpmac_key_set(k, raw, sizeof raw), 0);
}

/* STOP, seq 7, counter 0x0001020304050607. */
static const uint8_t golden_stop[56] = {
    0x4b, 0x4e, 0x01, 0x04, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, /* header, MAC flag */
    0x63, 0x0d, 0xcd, 0x29,                                                 /* key id */
    0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00,                         /* counter */
    0x4c, 0x64, 0x87, 0x65, 0x85, 0xe9, 0x3a, 0xf9, 0x28, 0x9f, 0x7b, 0x69, 0xed, 0xba, 0x36, 0xc8,
    0xb6, 0xbb, 0x80, 0xe1, 0x43, 0xea, 0x35, 0x70, 0x36, 0xc4, 0x09, 0xed, 0xe8, 0xe0, 0x2d, 0x2b,
};

/* CRAWLER 300, -300 with ACK_REQ, seq 8, counter 0x0001020304050608. */
static const uint8_t golden_crawler[64] = {
    0x4b, 0x4e, 0x01, 0x02, 0x08, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01, 0x80, /* header */
    0x2c, 0x01, 0x00, 0x00, 0xd4, 0xfe, 0xff, 0xff,                         /* payload */
    0x63, 0x0d, 0xcd, 0x29, 0x08, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00, 0xbe, 0xfb, 0xba,
    0xc6, 0x57, 0x86, 0xc5, 0xca, 0xfa, 0xc3, 0xa0, 0x7b, 0x4c, 0xbf, 0xf4, 0x58, 0x46, 0x44,
    0x81, 0x90, 0x4c, 0xf2, 0x53, 0x17, 0xb4, 0x03, 0x05, 0x1d, 0xb3, 0x8c, 0x39, 0x0b,
};

static size_t encode(uint8_t type, uint32_t seq, uint16_t flags, uint8_t *buf)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, type, seq, flags);
    if (type == KN_KRP_CRAWLER) {
        m.u.crawler.left_mm_s = 300;
        m.u.crawler.right_mm_s = -300;
    }
    size_t n = kn_krp_encode(&m, buf, KN_KRP_MAX_DGRAM);
    ck_assert_uint_gt(n, 0);
    return n;
}

START_TEST(golden_sign)
{
    struct kn_krpmac_key k;
    test_key(&k);
    uint8_t buf[KN_KRP_MAX_DGRAM + KN_KRPMAC_TRAILER];
    size_t n = encode(KN_KRP_STOP, 7, 0, buf);
    n = kn_krpmac_sign(&k, 0x0001020304050607ull, buf, n, sizeof buf);
    ck_assert_uint_eq(n, sizeof golden_stop);
    ck_assert_mem_eq(buf, golden_stop, n);
    n = encode(KN_KRP_CRAWLER, 8, KN_KRP_F_ACK_REQ, buf);
    n = kn_krpmac_sign(&k, 0x0001020304050608ull, buf, n, sizeof buf);
    ck_assert_uint_eq(n, sizeof golden_crawler);
    ck_assert_mem_eq(buf, golden_crawler, n);
    /* no room, no header */
    ck_assert_uint_eq(kn_krpmac_sign(&k, 1, buf, 20, 20 + KN_KRPMAC_TRAILER - 1), 0);
    ck_assert_uint_eq(kn_krpmac_sign(&k, 1, buf, 11, sizeof buf), 0);
}
END_TEST

START_TEST(golden_verify)
{
    struct kn_krpmac_key k;
    test_key(&k);
    uint8_t buf[sizeof golden_crawler];
    memcpy(buf, golden_crawler, sizeof buf);
    size_t n = sizeof buf;
    uint64_t ctr = 0;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_OK);
    ck_assert_uint_eq(n, 20);
    ck_assert_uint_eq(ctr, 0x0001020304050608ull);
    struct kn_krp_msg m;
    ck_assert_int_eq(kn_krp_decode(buf, n, &m), KN_KRP_OK);
    ck_assert_uint_eq(m.h.flags, KN_KRP_F_ACK_REQ); /* the MAC flag is gone */
    ck_assert_int_eq(m.u.crawler.left_mm_s, 300);
    ck_assert_int_eq(m.u.crawler.right_mm_s, -300);
    /* undone: the bytes that arrived, and they verify again */
    ck_assert_uint_eq(kn_krpmac_unverify(buf, n), sizeof golden_crawler);
    ck_assert_mem_eq(buf, golden_crawler, sizeof golden_crawler);
    n = sizeof buf;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_OK);
}
END_TEST

/* Any single changed bit anywhere: never OK. */
START_TEST(every_byte_guarded)
{
    struct kn_krpmac_key k;
    test_key(&k);
    for (size_t i = 0; i < sizeof golden_crawler; i++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t buf[sizeof golden_crawler];
            memcpy(buf, golden_crawler, sizeof buf);
            buf[i] ^= (uint8_t)(1u << bit);
            size_t n = sizeof buf;
            uint64_t ctr = 0;
            enum kn_krpmac_verdict v = kn_krpmac_verify(&k, buf, &n, &ctr);
            ck_assert_msg(v == KN_KRPMAC_BAD || v == KN_KRPMAC_MISSING, "byte %zu bit %d: %s", i,
                          bit, kn_krpmac_verdict_name(v));
            ck_assert_uint_eq(n, sizeof buf); /* left alone */
        }
    }
}
END_TEST

START_TEST(misplaced_and_missing)
{
    struct kn_krpmac_key k, other;
    test_key(&k);
    uint8_t raw[40];
    memset(raw, 0x5a, sizeof raw);
    ck_assert_int_eq(kn_krpmac_key_set(&other, raw, sizeof raw), 0);
    uint8_t buf[128];
    uint64_t ctr;
    size_t n = encode(KN_KRP_STOP, 1, 0, buf);
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_MISSING);
    n = 5;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_MISSING);
    /* one byte more or less than header + length + 44 */
    memcpy(buf, golden_stop, sizeof golden_stop);
    buf[sizeof golden_stop] = 0;
    n = sizeof golden_stop + 1;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_BAD);
    n = sizeof golden_stop - 1;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_BAD);
    /* the flag alone, no trailer */
    n = encode(KN_KRP_STOP, 1, 0, buf);
    buf[11] |= 0x80;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_BAD);
    /* signed with another key */
    n = encode(KN_KRP_STOP, 1, 0, buf);
    n = kn_krpmac_sign(&other, 5, buf, n, sizeof buf);
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_BAD);
    ck_assert_int_eq(kn_krpmac_verify(&other, buf, &n, &ctr), KN_KRPMAC_OK);
    ck_assert_uint_eq(ctr, 5);
    /* key lengths */
    ck_assert_int_eq(kn_krpmac_key_set(&other, raw, 31), -1);
    uint8_t big[65] = { 0 };
    ck_assert_int_eq(kn_krpmac_key_set(&other, big, 65), -1);
    ck_assert_int_eq(kn_krpmac_key_set(&other, big, 64), 0);
}
END_TEST

START_TEST(key_text)
{
    uint8_t key[KN_KEYFILE_MAX];
    size_t len = 0;
    char why[160];
    const char *ok = "000102030405060708090a0b0c0d0e0f\n101112131415161718191A1B1C1D1E1F\n";
    ck_assert_int_eq(kn_keyfile_parse(ok, strlen(ok), key, &len, why, sizeof why), 0);
    ck_assert_uint_eq(len, 32);
    for (int i = 0; i < 32; i++)
        ck_assert_uint_eq(key[i], i);
    const char *od = " 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n"
                     " 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f 20\n";
    ck_assert_int_eq(kn_keyfile_parse(od, strlen(od), key, &len, why, sizeof why), 0);
    ck_assert_uint_eq(len, 33);
    const char *shortk = "0001020304";
    ck_assert_int_eq(kn_keyfile_parse(shortk, strlen(shortk), key, &len, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "10 hex digits, at least 64"));
    char odd[70];
    memset(odd, 'a', 65);
    ck_assert_int_eq(kn_keyfile_parse(odd, 65, key, &len, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "odd"));
    odd[3] = 'g';
    ck_assert_int_eq(kn_keyfile_parse(odd, 64, key, &len, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "byte 3 is not a hex digit"));
    char lng[200];
    memset(lng, 'f', sizeof lng);
    ck_assert_int_eq(kn_keyfile_parse(lng, 130, key, &len, why, sizeof why), -1);
    ck_assert_ptr_nonnull(strstr(why, "more than 128"));
    ck_assert_int_eq(kn_keyfile_parse(lng, 128, key, &len, why, sizeof why), 0);
    ck_assert_uint_eq(len, 64);
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(key_file)
{
    char dir[] = "/tmp/kn-keyfile-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64], why[512];
    snprintf(path, sizeof path, "%s/key", dir);
    uint8_t key[KN_KEYFILE_MAX];
    size_t len = 0;
    write_file(path, "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n", 0600);
    ck_assert_int_eq(kn_keyfile_read(path, key, &len, why, sizeof why), 0);
    ck_assert_uint_eq(len, 32);
    ck_assert_uint_eq(key[31], 0x1f);
    ck_assert_int_eq(chmod(path, 0640), 0);
    ck_assert_int_eq(kn_keyfile_read(path, key, &len, why, sizeof why), -1);
    ck_assert_msg(strstr(why, path) && strstr(why, "0640") && strstr(why, "chmod 600"), "%s", why);
    ck_assert_int_eq(chmod(path, 0604), 0);
    ck_assert_int_eq(kn_keyfile_read(path, key, &len, why, sizeof why), -1);
    write_file(path, "0102\n", 0400);
    ck_assert_int_eq(kn_keyfile_read(path, key, &len, why, sizeof why), -1);
    ck_assert_msg(strstr(why, path) && strstr(why, "4 hex digits"), "%s", why);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(kn_keyfile_read(path, key, &len, why, sizeof why), -1);
    ck_assert_msg(strstr(why, path) && strstr(why, "No such file"), "%s", why);
    ck_assert_int_eq(kn_keyfile_read(dir, key, &len, why, sizeof why), -1);
    ck_assert_msg(strstr(why, "not a regular file"), "%s", why);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Counters follow the clock, never repeat, never go back. */
START_TEST(counter_follows_clock)
{
    ck_assert_uint_eq(kn_krpmac_counter_next(0, 1700000000000000), 1700000000000000ull);
    ck_assert_uint_eq(kn_krpmac_counter_next(1700000000000000, 1700000000000000),
                      1700000000000001ull); /* two in one microsecond */
    ck_assert_uint_eq(kn_krpmac_counter_next(1700000000000005, 1700000000000001),
                      1700000000000006ull); /* the clock stepped back */
    ck_assert_uint_eq(kn_krpmac_counter_next(1700000000000005, 1700000030000000),
                      1700000030000000ull); /* a long pause: back to the clock */
    ck_assert_uint_eq(kn_krpmac_counter_next(0, -5), 1);
    ck_assert_uint_eq(kn_krpmac_counter_next(UINT64_MAX - 1, 5), UINT64_MAX);
    /* the MAC of a verified datagram is where its trailer was */
    struct kn_krpmac_key k;
    test_key(&k);
    uint8_t buf[sizeof golden_stop];
    memcpy(buf, golden_stop, sizeof buf);
    size_t n = sizeof buf;
    uint64_t ctr;
    ck_assert_int_eq(kn_krpmac_verify(&k, buf, &n, &ctr), KN_KRPMAC_OK);
    ck_assert_ptr_eq(kn_krpmac_mac(buf, n), buf + sizeof golden_stop - KN_KRPMAC_MAC_LEN);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("krp-mac");
    TCase *tc = tcase_create("krp-mac");
    tcase_add_test(tc, golden_sign);
    tcase_add_test(tc, golden_verify);
    tcase_add_test(tc, every_byte_guarded);
    tcase_add_test(tc, misplaced_and_missing);
    tcase_add_test(tc, key_text);
    tcase_add_test(tc, key_file);
    tcase_add_test(tc, counter_follows_clock);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
