/* kenaf.h: the Kenaf driver library API, version 1 (libkenaf.so.1).
 *
 * Controller programs are written against this header. The robot's own
 * driver library and the simulation library (libkenaf_sim) both implement it
 * with the same soname and the same exported symbols, so a controller binary
 * built once runs against either without recompiling. Version 1 is frozen:
 * the declarations and the layout of hrt_status below never change (an ABI
 * check guards them); a later version adds new functions instead.
 *
 * Units and frames are KRP/1's: mm, mm/s, degrees; body frame x forward,
 * y left, z up; yaw + = left (counter-clockwise seen from above); flipper
 * 0 = in line with the track, + = tip up.
 *
 * How the simulation library behaves (the contract callers may rely on):
 *
 *  Environment (read by hrt_kenaf_init):
 *   KENAF_ROBOT       robot address "host:port" ("[v6addr]:port" for IPv6;
 *                     the port may be left out). Default 127.0.0.1:9750.
 *   KENAF_TIMEOUT_MS  how long the robot may stay silent before a call gives
 *                     HRT_ETIMEOUT. Default 1000, valid 10..600000.
 *   KENAF_STATUS_MS   status subscription period. Default 20, valid 10..1000.
 *   KENAF_LOCKSTEP=1  refuse (HRT_EINVAL) a robot that cannot run in lockstep.
 *   KENAF_DEBUG=1     diagnostics on stderr (otherwise the library prints
 *                     nothing except in hrt_show_status).
 *   An invalid value makes hrt_kenaf_init return HRT_EINVAL.
 *
 *  Connection: one per process (the API has no handle), a connected UDP
 *  socket served by one I/O thread. hrt_kenaf_init sends HELLO every 100 ms
 *  until HELLO_ACK, subscribes to STATUS and waits for the first one, all
 *  within KENAF_TIMEOUT_MS, else HRT_ETIMEOUT. Calling it again while
 *  connected returns 0 and does nothing; after hrt_kenaf_exit it connects
 *  anew. The library never calls exit(), installs no signal handlers and
 *  raises no SIGPIPE.
 *
 *  Link upkeep: SUBSCRIBE is renewed every second; if the robot answers it
 *  with BUSY the library polls with STATUS_REQ at the same period. When no
 *  STATUS arrives for KENAF_TIMEOUT_MS the link counts as lost: calls report
 *  HRT_ETIMEOUT, the held belt speed is no longer repeated (so the robot's
 *  watchdog stops it), and HELLO + SUBSCRIBE are retried every 200 ms. When
 *  the robot answers again (e.g. its daemon restarted) the held set-points
 *  are sent again and the program carries on.
 *
 *  Set-points: hrt_set_crawler_speed returns at once (no round trip). A
 *  held non-zero speed is repeated every 100 ms so the robot's 500 ms
 *  watchdog never trips while a program holds it; a change to zero is
 *  repeated for 300 ms, then repetition stops. Values beyond the robot's
 *  limits (from HELLO_ACK) are clamped, applied, and reported as
 *  HRT_ERANGE. Flipper set-points are sent once and repeated twice at
 *  100 ms. hrt_stop sends STOP three times at 100 ms and drops the held
 *  speed. When several conditions hold, a set-point call reports the first
 *  of: HRT_EINVAL (NaN, infinity, bad flipper index; nothing sent),
 *  HRT_EESTOP (robot in emergency stop; nothing sent), HRT_ETIMEOUT (link
 *  lost; kept and sent when the link returns), HRT_EBACKEND (simulator not
 *  connected; sent anyway), HRT_ERANGE (clamped value sent).
 *
 *  Status: hrt_get_status copies the latest STATUS without any I/O. It
 *  returns HRT_EBACKEND or HRT_ETIMEOUT with the struct still filled (last
 *  known values) when the simulator or the link is down.
 *
 *  Motions: hrt_go_forward closes the loop on the mean encoder count
 *  change (wrap-safe), ramps at 400 mm/s^2 up to 200 mm/s and brakes as
 *  sqrt(2 a d), holding the heading by matching left and right travel; it
 *  is done within 1 mm. hrt_turning closes the loop on the STATUS yaw,
 *  unwrapping every step, so any angle (270 deg, across +-180 deg) works;
 *  done within 0.5 deg. At the target both set the belts to zero and
 *  return once the belts report standstill (at most 1 s). They fail with
 *  HRT_ETIMEOUT (after sending STOP) when STATUS stops for KENAF_TIMEOUT_MS
 *  or the belts make no progress for 3 s of robot time, HRT_EESTOP on an
 *  emergency stop and HRT_EBACKEND when the simulator goes down. Motions
 *  from several threads run one after the other.
 *
 *  Time: hrt_time is the robot clock (simulation time in simulation),
 *  interpolated between STATUS messages at the rate the robot clock was
 *  seen to run (so it follows a paused or faster-than-real-time simulator),
 *  extrapolating at most two status periods, never going backwards (after
 *  the robot clock restarts it carries on from where it was). hrt_sleep
 *  sleeps on that clock and gives HRT_ETIMEOUT if the link is lost.
 *
 *  Lockstep: with a robot whose HELLO_ACK has capability bit 2 the world
 *  moves only inside hrt_sleep (seconds > 0) and the blocking motions,
 *  which ask the robot for the time to pass (KRP/1 STEP); hrt_time is then
 *  the robot clock after the last step. Every other call lets no time
 *  pass. The program's wall clock is untouched.
 */
#ifndef KENAF_H
#define KENAF_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && __GNUC__ >= 4
#define HRT_API __attribute__((visibility("default")))
#else
#define HRT_API
#endif

#define HRT_API_VERSION 1

/* Error codes: every function that returns int gives 0 or one of these. */
enum {
    HRT_OK = 0,
    HRT_ENOTINIT = -1, /* hrt_kenaf_init has not succeeded */
    HRT_ETIMEOUT = -2, /* the robot does not answer */
    HRT_ERANGE = -3,   /* value clamped to the robot's limit (and applied) */
    HRT_EESTOP = -4,   /* emergency stop engaged */
    HRT_EBACKEND = -5, /* simulator not connected */
    HRT_EINVAL = -6,   /* bad argument or bad environment setting */
    HRT_ESYS = -7,     /* operating system error (socket, thread) */
};

/* Flipper indices (hrt_set_flipper_angle, hrt_status.flipper_*). */
enum {
    HRT_FLIPPER_FL = 0, /* front left */
    HRT_FLIPPER_FR = 1, /* front right */
    HRT_FLIPPER_RL = 2, /* rear left */
    HRT_FLIPPER_RR = 3, /* rear right */
};

/* hrt_status.flags bits: the robot's KRP/1 state flags, bit for bit. */
#define HRT_FLAG_ESTOP 0x0001u      /* emergency stop latched */
#define HRT_FLAG_BACKEND_UP 0x0002u /* simulator connected (always set on hardware) */
#define HRT_FLAG_SIMULATED 0x0004u  /* this robot is a simulation */
#define HRT_FLAG_WATCHDOG 0x0008u   /* belts stopped: commands stopped arriving */
#define HRT_FLAG_CLAMPED 0x0010u    /* last set-point was clamped */
#define HRT_FLAG_STALE 0x0020u      /* sensor data older than 500 ms */

/* One robot status. Part of the frozen v1 ABI: never reorder or resize. */
typedef struct hrt_status {
    double time_s;            /* robot clock when measured, s */
    int32_t crawler_count[2]; /* belt encoder counts L, R (wrap) */
    double crawler_speed[2];  /* measured belt speed L, R, mm/s */
    double flipper_angle[4];  /* FL, FR, RL, RR, deg */
    double flipper_torque[4]; /* FL, FR, RL, RR, N*m (0 if not measured) */
    double roll;              /* deg, + lifts the left side */
    double pitch;             /* deg, + lowers the nose */
    double yaw;               /* deg in (-180, 180], + = left */
    double angular_rate[3];   /* body x, y, z, deg/s */
    double acceleration[3];   /* body x, y, z, mm/s^2, gravity included */
    double position[3];       /* world x, y, z, mm (simulation only) */
    double battery;           /* V */
    uint32_t flags;           /* HRT_FLAG_* */
} hrt_status;

/* Connects to the robot (see KENAF_ROBOT). 0 or HRT_E*. */
HRT_API int hrt_kenaf_init(void);

/* Stops the robot and the library's thread, closes the socket. Safe to
 * call twice or without hrt_kenaf_init. */
HRT_API void hrt_kenaf_exit(void);

/* Drives straight by mm (negative = backward); blocks until done. */
HRT_API int hrt_go_forward(double mm);

/* Turns in place by deg (+ = left, counter-clockwise); blocks until done. */
HRT_API int hrt_turning(double deg);

/* Belts to 0 at once. */
HRT_API int hrt_stop(void);

/* Prints one human-readable status block to stdout. */
HRT_API void hrt_show_status(void);

/* Belt speed set-points, mm/s, + = forward; held until changed. */
HRT_API int hrt_set_crawler_speed(double left_mm_s, double right_mm_s);

/* One flipper (HRT_FLIPPER_*) to deg. */
HRT_API int hrt_set_flipper_angle(int flipper, double deg);

/* All four flippers (FL, FR, RL, RR) to deg[]. */
HRT_API int hrt_set_flipper_angles(const double deg[4]);

/* Copies the latest status into *st. */
HRT_API int hrt_get_status(hrt_status *st);

/* 1 in simulation, 0 on hardware, HRT_ENOTINIT before init. */
HRT_API int hrt_is_simulated(void);

/* Robot clock in seconds; HRT_ENOTINIT (as a double) before init. */
HRT_API double hrt_time(void);

/* Sleeps for seconds of robot clock. */
HRT_API int hrt_sleep(double seconds);

/* Text for any value an hrt_* function returns; never NULL. */
HRT_API const char *hrt_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif
