/* hrt_kenaf_init / hrt_kenaf_exit: the life of the one connection. Init
 * starts the I/O thread in its handshake state and waits, bounded by
 * KENAF_TIMEOUT_MS, for the link to come up; exit stops the robot, cancels
 * the subscription and tears everything down so init can start afresh. */
#include "lib.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "status_fill.h"

#define KN_EXIT_STOP_WAIT_NS (300 * KN_MS)

static void reset_state_locked(const struct kn_settings *cfg)
{
    kn_lib.cfg = *cfg;
    memset(kn_lib.name, 0, sizeof kn_lib.name);
    strncpy(kn_lib.name, program_invocation_short_name, KN_KRP_NAME_LEN);
    kn_lib.link = KN_LIB_LINK_HANDSHAKE;
    kn_lib.have_hello = false;
    memset(&kn_lib.hello, 0, sizeof kn_lib.hello);
    kn_lib.sub_busy = false;
    kn_lib.next_hello = kn_lib.next_sub = kn_lib.next_poll = 0;
    kn_lib.rehello = false;
    kn_lib.next_claim = 0;
    kn_lib.have_status = false;
    kn_lib.status_gen = 0;
    kn_lib.status_wall = 0;
    memset(&kn_lib.raw, 0, sizeof kn_lib.raw);
    memset(&kn_lib.st, 0, sizeof kn_lib.st);
    kn_clock_reset(&kn_lib.clock, cfg->status_ms);
    kn_sp_reset_locked();
    kn_lib.lockstep = kn_lib.step_waiting = false;
    kn_lib.step_seq = 0;
    kn_lib.step_rc = HRT_OK;
    kn_lib.step_gen = kn_lib.lock_us = 0;
    kn_lib.rx_bad = kn_lib.tx_fail = 0;
}

int hrt_kenaf_init(void)
{
    kn_lib_once();
    int64_t start = kn_lib_now();
    pthread_mutex_lock(&kn_lib.life_mu);
    pthread_mutex_lock(&kn_lib.mu);
    bool running = kn_lib.running;
    pthread_mutex_unlock(&kn_lib.mu);
    if (running) {
        pthread_mutex_unlock(&kn_lib.life_mu);
        return HRT_OK;
    }

    struct kn_settings cfg;
    char err[300];
    int rc = kn_settings_load(&cfg, err, sizeof err);
    kn_lib_set_debug(cfg.debug);
    if (rc != 0) {
        kn_lib_debug("%s", err);
        pthread_mutex_unlock(&kn_lib.life_mu);
        return HRT_EINVAL;
    }
    pthread_mutex_lock(&kn_lib.mu);
    reset_state_locked(&cfg);
    pthread_mutex_unlock(&kn_lib.mu);

    rc = kn_udp_open(&cfg);
    if (rc == 0) {
        rc = kn_io_start();
        if (rc != 0)
            kn_udp_close();
    }
    if (rc != 0) {
        pthread_mutex_unlock(&kn_lib.life_mu);
        return rc;
    }

    int64_t deadline = start + cfg.timeout_ms * KN_MS;
    pthread_mutex_lock(&kn_lib.mu);
    while (kn_lib.link != KN_LIB_LINK_UP && kn_lib_now() < deadline)
        kn_lib_wait_locked(deadline);
    bool up = kn_lib.link == KN_LIB_LINK_UP;
    bool no_step = up && cfg.lockstep && !kn_lib.lockstep;
    kn_lib.running = up && !no_step;
    bool had_hello = kn_lib.have_hello;
    pthread_mutex_unlock(&kn_lib.mu);
    if (no_step) {
        /* a CI run that asked for lockstep must not quietly race the clock */
        fprintf(stderr,
                "libkenaf (kenaf-sim): KENAF_LOCKSTEP=1 but the robot at %s port %s "
                "does not run in lockstep (HELLO_ACK capability bit 2 clear)\n",
                cfg.host, cfg.port);
        kn_io_stop();
        kn_udp_close();
        pthread_mutex_unlock(&kn_lib.life_mu);
        return HRT_EINVAL;
    }
    if (!up) {
        kn_lib_debug("no answer from %s port %s within %d ms (%s)", cfg.host, cfg.port,
                     cfg.timeout_ms, had_hello ? "HELLO_ACK but no STATUS" : "no HELLO_ACK");
        kn_io_stop();
        kn_udp_close();
        pthread_mutex_unlock(&kn_lib.life_mu);
        return HRT_ETIMEOUT;
    }
    kn_lib_debug("connected to %s port %s", cfg.host, cfg.port);
    pthread_mutex_unlock(&kn_lib.life_mu);
    return HRT_OK;
}

void hrt_kenaf_exit(void)
{
    kn_lib_once();
    pthread_mutex_lock(&kn_lib.life_mu);
    pthread_mutex_lock(&kn_lib.mu);
    if (!kn_lib.running) {
        pthread_mutex_unlock(&kn_lib.mu);
        pthread_mutex_unlock(&kn_lib.life_mu);
        return;
    }
    kn_lib.running = false; /* from here on every call gives HRT_ENOTINIT */
    pthread_cond_broadcast(&kn_lib.cond);
    int64_t now = kn_lib_now();
    kn_sp_stop_locked(now);
    /* Let the STOP repeats go out (bounded) unless nobody is listening. */
    int64_t deadline = now + KN_EXIT_STOP_WAIT_NS;
    while (kn_lib.link == KN_LIB_LINK_UP && kn_lib.stop_left > 0 && kn_lib_now() < deadline)
        kn_lib_wait_locked(deadline);
    kn_udp_send_subscribe(0, 0);
    /* BYE ends the session: the robot is free for another driver at once,
     * not after its 5 s of silence (a robot without sessions answers
     * UNKNOWN_TYPE, which nobody reads any more). */
    kn_udp_send_simple(KN_KRP_BYE, 0);
    pthread_mutex_unlock(&kn_lib.mu);

    kn_io_stop();
    kn_udp_close();
    kn_lib_debug("disconnected (%lu bad datagrams received, %lu sends failed)", kn_lib.rx_bad,
                 kn_lib.tx_fail);
    pthread_mutex_unlock(&kn_lib.life_mu);
}
