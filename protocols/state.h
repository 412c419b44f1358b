/* The neutral robot state and command: SI units, KRP/1 body frame
 * (x forward, y left, z up; world z up). The controller side and every
 * simulator backend meet here; the conversion module (convert.h) maps each
 * side's units and frames onto these structs and back. */
#ifndef KN_STATE_H
#define KN_STATE_H

#include <stdbool.h>
#include <stdint.h>

enum { KN_LEFT = 0, KN_RIGHT = 1 };
enum { KN_FL = 0, KN_FR = 1, KN_RL = 2, KN_RR = 3, KN_NFLIPPERS = 4 };

/* Which fields of kn_state a backend has filled; the rest are derived
 * (rates from successive poses) or reported as 0. */
#define KN_HAVE_TIME 0x0001u
#define KN_HAVE_BELT_POS 0x0002u
#define KN_HAVE_BELT_SPEED 0x0004u
#define KN_HAVE_FLIPPER 0x0008u
#define KN_HAVE_TORQUE 0x0010u
#define KN_HAVE_ATTITUDE 0x0020u
#define KN_HAVE_RATE 0x0040u
#define KN_HAVE_ACCEL 0x0080u
#define KN_HAVE_POSITION 0x0100u
#define KN_HAVE_BATTERY 0x0200u

struct kn_state {
    double time_s;                    /* simulation time */
    double belt_pos_m[2];             /* accumulated belt travel L, R */
    double belt_speed_m_s[2];         /* measured belt speed L, R */
    double flipper_rad[KN_NFLIPPERS]; /* 0 in line, + tip up */
    double flipper_torque_nm[KN_NFLIPPERS];
    double rpy_rad[3];    /* roll, pitch, yaw; yaw in (-pi, pi] */
    double rate_rad_s[3]; /* body angular rate */
    double accel_m_s2[3]; /* body, gravity included (+9.81 z at rest) */
    double pos_m[3];      /* world, ground truth */
    double battery_v;
    uint32_t have; /* KN_HAVE_* bits */
};

/* A command toward the simulator, in the same units and frame. */
struct kn_command {
    double belt_speed_m_s[2];         /* L, R, + forward */
    double flipper_rad[KN_NFLIPPERS]; /* targets */
    uint8_t flipper_mask;             /* bit k: flipper k target is set */
    /* A stop the robot's safety rules made (watchdog trip, ESTOP), not a
     * controller's: a backend that can (the built-in engine) brakes the
     * belts as hard as the motor drivers do instead of ramping down. */
    bool emergency;
};

#endif
