/* Internal state of libkenaf_sim: the one connection a process has (the API
 * has no handle), shared by the API functions and the I/O thread.
 *
 * Locking: life_mu serialises init/exit; motion_mu lets one motion run at a
 * time; mu guards the state below and goes with cond; send_mu guards seq and
 * the socket so datagrams leave in seq order. Order: life_mu -> motion_mu ->
 * mu -> send_mu; the I/O thread takes only mu and send_mu. */
#ifndef KN_LIB_H
#define KN_LIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "kenaf.h"
#include "krp.h"
#include "krp_session.h"
#include "robot_clock.h"
#include "settings.h"

#define KN_MS ((int64_t)1000000)

enum kn_lib_link_state {
    KN_LIB_LINK_DOWN,      /* not started */
    KN_LIB_LINK_HANDSHAKE, /* HELLO until HELLO_ACK, then SUBSCRIBE until STATUS */
    KN_LIB_LINK_UP,        /* STATUS arriving */
    KN_LIB_LINK_LOST,      /* no STATUS for timeout_ms: HELLO + SUBSCRIBE every 200 ms */
};

struct kn_lib {
    pthread_mutex_t life_mu;
    pthread_mutex_t motion_mu;
    pthread_mutex_t mu;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; broadcast on STATUS, HELLO_ACK,
                          * link changes, exit, end of STOP repeats */
    pthread_mutex_t send_mu;
    uint32_t seq;               /* send_mu: last seq sent; one counter, +1 per datagram */
    int fd;                     /* send_mu: connected UDP socket or -1 */
    struct kn_krp_session sess; /* send_mu: the robot's session, stamped on every datagram */

    /* ---- guarded by mu ---- */
    bool running; /* init succeeded and exit not called */
    bool quit;    /* the I/O thread is to leave */
    bool thread_started;
    pthread_t thread;
    int wake[2]; /* self-pipe: wakes the I/O thread's poll */
    int64_t io_sleep_until;

    struct kn_settings cfg;
    char name[KN_KRP_NAME_LEN + 1];

    enum kn_lib_link_state link;
    bool have_hello;
    struct kn_krp_hello_ack hello;
    bool sub_busy;      /* robot refused SUBSCRIBE (BUSY): poll with STATUS_REQ */
    int64_t next_hello; /* handshake / recovery retry */
    int64_t next_sub;   /* SUBSCRIBE renewal */
    int64_t next_poll;  /* STATUS_REQ while sub_busy */
    bool rehello;       /* HELLO again while up: session lost, or asking to drive */
    int64_t next_claim; /* earliest next HELLO asking to drive after NOT_OWNER */

    bool have_status;
    uint64_t status_gen; /* +1 per STATUS */
    int64_t status_wall; /* when the latest STATUS arrived */
    struct kn_krp_status raw;
    hrt_status st;
    struct kn_clock clock;

    /* set-points (setpoints.c) */
    int32_t crawler[2];
    bool crawler_held;     /* crawler[] is being repeated */
    int64_t crawler_until; /* repeat until then (INT64_MAX while non-zero) */
    int64_t next_crawler;
    int32_t flip_cdeg[4];
    uint8_t flip_known;   /* flippers ever set: re-sent after the link returns */
    uint8_t flip_pending; /* flippers still being repeated */
    int flip_left;
    int64_t next_flip;
    int stop_left;
    int64_t next_stop;

    /* lockstep (lockstep.c): the robot's clock moves only on STEP */
    bool lockstep;     /* HELLO_ACK has KN_KRP_CAP_LOCKSTEP */
    bool step_waiting; /* a STEP is out, its answer not yet in */
    uint32_t step_seq; /* its seq */
    int step_rc;       /* its outcome: HRT_OK, or HRT_E* from an ERROR */
    uint64_t step_gen; /* +1 per answered STEP */
    uint64_t lock_us;  /* robot time after the last answered STEP */

    unsigned long rx_bad;  /* undecodable or unexpected datagrams */
    unsigned long tx_fail; /* send() failures */
};

extern struct kn_lib kn_lib;

/* lib.c */
void kn_lib_once(void);
int64_t kn_lib_now(void); /* CLOCK_MONOTONIC, ns */
/* Waits on cond (mu held) until broadcast or the monotonic deadline. */
void kn_lib_wait_locked(int64_t deadline);
void kn_lib_set_debug(bool on);
void kn_lib_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Belt travel of one encoder count, from HELLO_ACK's counts_per_m. */
double kn_lib_mm_per_count_locked(void);

/* udp.c: the socket and the send path */
int kn_udp_open(const struct kn_settings *cfg);
void kn_udp_close(void);
/* Sends m (seq assigned here and left in m->h.seq). 0, or -1 when the
 * socket is closed or send fails. */
int kn_udp_send(struct kn_krp_msg *m);
void kn_udp_send_simple(uint8_t type, uint16_t flags);
void kn_udp_send_subscribe(uint16_t period_ms, uint16_t flags);
/* The session's role and token from a HELLO_ACK; true when it made us the driver. */
bool kn_udp_session_accept(const struct kn_krp_hello_ack *a);
/* An ERROR that ends the session (BAD_SESSION for the current token). */
bool kn_udp_session_lost(const struct kn_krp_error *e);

/* signing.c: the shared key (KENAF_KEY_FILE). setup -1: unusable key. out
 * signs in place (send_mu held) and returns the new length; in verifies
 * and strips, false: drop it (counted in rx_bad). */
int kn_sign_setup(const struct kn_settings *cfg);
size_t kn_sign_out(uint8_t *buf, size_t len, size_t cap);
bool kn_sign_in(uint8_t *buf, size_t *len);

/* io_thread.c */
int kn_io_start(void);
void kn_io_stop(void);
/* Makes the I/O thread look at its timers by `deadline` (mu held). */
void kn_io_wake_locked(int64_t deadline);

/* lockstep.c (mu held): a robot in lockstep moves only when the library
 * asks. step sends STEP for advance_us (rounded up to whole ms) and waits
 * for its STATUS; HRT_OK or HRT_E*. now_s is the robot time (the last
 * answered STEP's); sleep lets `seconds` pass in status-period STEPs. The
 * I/O thread reports answers with kn_lockstep_status / kn_lockstep_error. */
int kn_lockstep_step_locked(uint32_t advance_us);
double kn_lockstep_now_s_locked(void);
int kn_lockstep_sleep_locked(double seconds);
void kn_lockstep_status_locked(const struct kn_krp_status *s);
void kn_lockstep_error_locked(const struct kn_krp_error *e);

/* setpoints.c (mu held) */
void kn_sp_reset_locked(void);
void kn_sp_crawler_locked(int32_t left, int32_t right, int64_t now);
void kn_sp_stop_locked(int64_t now);
void kn_sp_flipper_locked(uint8_t mask, const int32_t cdeg[4], int64_t now);
void kn_sp_resend_locked(int64_t now);
int64_t kn_sp_timers_locked(int64_t now); /* sends what is due; next deadline */

#endif
