/* The shared key on the library's side (KENAF_KEY_FILE; docs/protocol.md
 * "Extension: shared key"): every datagram to the robot signed with the
 * next counter, which follows the wall clock, every answer verified,
 * stripped and checked against the robot's last counter. Without -Dkeys
 * these are pass-throughs, and kn_settings_load has already refused a key. */
#include "lib.h"

#include <string.h>
#include <time.h>

#ifdef KN_HAVE_KEYS
#include "krp_mac.h"
#include "krp_replay.h"

static bool keyed;
static struct kn_krpmac_key key;
static uint64_t out_counter; /* send_mu */
static uint64_t in_last;     /* io thread */

static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
#endif

int kn_sign_setup(const struct kn_settings *cfg)
{
#ifdef KN_HAVE_KEYS
    keyed = false;
    if (cfg->key_len == 0)
        return 0;
    if (kn_krpmac_key_set(&key, cfg->key, cfg->key_len) < 0)
        return -1;
    pthread_mutex_lock(&kn_lib.send_mu);
    out_counter = 0; /* the next one is the clock's */
    pthread_mutex_unlock(&kn_lib.send_mu);
    /* The robot signs from its clock too: an answer it signed more than
     * the receivers' past window before this start is one recorded
     * earlier, not one to this client. */
    int64_t now = wall_us();
    in_last = now > (int64_t)KN_KRPREPLAY_PAST_US ? (uint64_t)now - KN_KRPREPLAY_PAST_US : 0;
    keyed = true;
#else
    (void)cfg;
#endif
    return 0;
}

size_t kn_sign_out(uint8_t *buf, size_t len, size_t cap)
{
#ifdef KN_HAVE_KEYS
    if (keyed && len > 0) {
        out_counter = kn_krpmac_counter_next(out_counter, wall_us());
        return kn_krpmac_sign(&key, out_counter, buf, len, cap);
    }
#else
    (void)buf;
    (void)cap;
#endif
    return len;
}

bool kn_sign_in(uint8_t *buf, size_t *len)
{
#ifdef KN_HAVE_KEYS
    if (!keyed)
        return true;
    uint64_t ctr = 0;
    enum kn_krpmac_verdict v = kn_krpmac_verify(&key, buf, len, &ctr);
    if (v == KN_KRPMAC_OK && ctr <= in_last)
        v = KN_KRPMAC_REPLAYED;
    if (v == KN_KRPMAC_OK) {
        in_last = ctr;
        return true;
    }
    kn_lib.rx_bad++;
    kn_lib_debug("dropped a datagram from the robot: shared key %s%s", kn_krpmac_verdict_name(v),
                 v == KN_KRPMAC_MISSING ? " (does the robot have key_file set?)" : "");
    return false;
#else
    (void)buf, (void)len;
    return true;
#endif
}
