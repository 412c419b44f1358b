/* The set-points the library holds for the program and repeats to the
 * robot: belts every 100 ms while non-zero (the robot's watchdog trips after
 * 500 ms without one), a zero for 300 ms and then silence (so a second
 * controller on the same robot is not fought forever), flippers and STOP
 * three times in all (UDP may lose one). Nothing is repeated while the link
 * is lost; kn_sp_resend_locked sends it again when the robot is back. */
#include "lib.h"

#include <string.h>

#define KN_REPEAT_NS (100 * KN_MS)
#define KN_ZERO_HOLD_NS (300 * KN_MS)
#define KN_EXTRA_SENDS 2

static void send_crawler(void)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_CRAWLER, 0, 0);
    m.u.crawler.left_mm_s = kn_lib.crawler[0];
    m.u.crawler.right_mm_s = kn_lib.crawler[1];
    kn_udp_send(&m);
}

static void send_flipper(uint8_t mask)
{
    struct kn_krp_msg m;
    kn_krp_init(&m, KN_KRP_FLIPPER, 0, 0);
    m.u.flipper.mask = mask;
    memcpy(m.u.flipper.target_cdeg, kn_lib.flip_cdeg, sizeof kn_lib.flip_cdeg);
    kn_udp_send(&m);
}

void kn_sp_reset_locked(void)
{
    memset(kn_lib.crawler, 0, sizeof kn_lib.crawler);
    memset(kn_lib.flip_cdeg, 0, sizeof kn_lib.flip_cdeg);
    kn_lib.crawler_held = false;
    kn_lib.flip_known = kn_lib.flip_pending = 0;
    kn_lib.flip_left = kn_lib.stop_left = 0;
}

void kn_sp_crawler_locked(int32_t left, int32_t right, int64_t now)
{
    kn_lib.crawler[0] = left;
    kn_lib.crawler[1] = right;
    kn_lib.crawler_held = true;
    kn_lib.crawler_until = (left != 0 || right != 0) ? INT64_MAX : now + KN_ZERO_HOLD_NS;
    kn_lib.stop_left = 0; /* a newer set-point supersedes a STOP still being repeated */
    if (kn_lib.link == KN_LIB_LINK_UP)
        send_crawler();
    kn_lib.next_crawler = now + KN_REPEAT_NS;
    kn_io_wake_locked(kn_lib.next_crawler);
}

void kn_sp_stop_locked(int64_t now)
{
    memset(kn_lib.crawler, 0, sizeof kn_lib.crawler);
    kn_lib.crawler_held = false;
    /* Sent whatever the link state: if the robot hears it, good. */
    kn_udp_send_simple(KN_KRP_STOP, 0);
    kn_lib.stop_left = KN_EXTRA_SENDS;
    kn_lib.next_stop = now + KN_REPEAT_NS;
    kn_io_wake_locked(kn_lib.next_stop);
}

void kn_sp_flipper_locked(uint8_t mask, const int32_t cdeg[4], int64_t now)
{
    for (int k = 0; k < 4; k++)
        if (mask & (1u << k))
            kn_lib.flip_cdeg[k] = cdeg[k];
    kn_lib.flip_known |= mask;
    kn_lib.flip_pending |= mask;
    kn_lib.flip_left = KN_EXTRA_SENDS;
    if (kn_lib.link == KN_LIB_LINK_UP)
        send_flipper(kn_lib.flip_pending);
    kn_lib.next_flip = now + KN_REPEAT_NS;
    kn_io_wake_locked(kn_lib.next_flip);
}

void kn_sp_resend_locked(int64_t now)
{
    if (kn_lib.crawler_held && now <= kn_lib.crawler_until) {
        send_crawler();
        kn_lib.next_crawler = now + KN_REPEAT_NS;
    }
    if (kn_lib.flip_known) {
        kn_lib.flip_pending = kn_lib.flip_known;
        kn_lib.flip_left = KN_EXTRA_SENDS;
        send_flipper(kn_lib.flip_pending);
        kn_lib.next_flip = now + KN_REPEAT_NS;
    }
}

static int64_t earlier(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int64_t kn_sp_timers_locked(int64_t now)
{
    int64_t next = INT64_MAX;
    /* lockstep: the world stands still between STEPs and kenaf-simd has no
     * watchdog then; repeats timed by the wall clock would only land at
     * places in the run that differ from one run to the next */
    if (kn_lib.lockstep) {
        kn_lib.crawler_held = false;
        kn_lib.flip_left = 0;
        kn_lib.flip_pending = 0;
        if (kn_lib.stop_left > 0) {
            kn_lib.stop_left = 0;
            pthread_cond_broadcast(&kn_lib.cond);
        }
        return next;
    }
    if (kn_lib.crawler_held && now > kn_lib.crawler_until)
        kn_lib.crawler_held = false;
    if (kn_lib.link == KN_LIB_LINK_UP) {
        if (kn_lib.crawler_held) {
            if (now >= kn_lib.next_crawler) {
                send_crawler();
                kn_lib.next_crawler = now + KN_REPEAT_NS;
            }
            next = earlier(next, kn_lib.next_crawler);
        }
        if (kn_lib.flip_left > 0) {
            if (now >= kn_lib.next_flip) {
                send_flipper(kn_lib.flip_pending);
                kn_lib.next_flip = now + KN_REPEAT_NS;
                if (--kn_lib.flip_left == 0)
                    kn_lib.flip_pending = 0;
            }
            if (kn_lib.flip_left > 0)
                next = earlier(next, kn_lib.next_flip);
        }
    }
    if (kn_lib.stop_left > 0) {
        if (now >= kn_lib.next_stop) {
            kn_udp_send_simple(KN_KRP_STOP, 0);
            kn_lib.next_stop = now + KN_REPEAT_NS;
            if (--kn_lib.stop_left == 0)
                pthread_cond_broadcast(&kn_lib.cond); /* hrt_kenaf_exit waits for it */
        }
        if (kn_lib.stop_left > 0)
            next = earlier(next, kn_lib.next_stop);
    }
    return next;
}
