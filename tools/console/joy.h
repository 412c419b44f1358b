/* joy.h: a gamepad's state and what it asks for, without any I/O: fed
 * with evdev events (type, code, value) and the axes' ranges, it gives
 * belt targets (deadzone, differential mixing, scaling to the speed level)
 * and, through the config's bindings, actions on a press (stop, e-stop,
 * presets, speed) and flipper moves while a button is held. */
#ifndef KN_CONSOLE_JOY_H
#define KN_CONSOLE_JOY_H

#include <stdbool.h>
#include <stdint.h>

#include "conf.h"

#define KN_JOY_MAX_EDGES 8

struct kn_joy_range {
    int min, max;
    bool known;
};

struct kn_joy {
    const struct kn_conf *conf;
    int value[64]; /* EV_ABS values by code (ABS_MAX is 0x3f) */
    struct kn_joy_range range[64];
    bool key[0x300]; /* EV_KEY state by code (KEY_MAX is 0x2ff) */
    bool pressed[KN_CONF_MAX_BINDINGS];
};

void kn_joy_init(struct kn_joy *j, const struct kn_conf *c);
/* Everything released and centred (the device went away). */
void kn_joy_reset(struct kn_joy *j);
/* An axis's range (from the device's absinfo); its value is set to value. */
void kn_joy_set_range(struct kn_joy *j, unsigned code, int min, int max, int value);
/* A button's state at plug-in: held moves act, presses do not fire. */
void kn_joy_set_key(struct kn_joy *j, unsigned code, bool down);
/* One input event. Actions bound to presses that started with it go to
 * edges (at most KN_JOY_MAX_EDGES); returns how many. */
int kn_joy_event(struct kn_joy *j, unsigned type, unsigned code, int value,
                 struct kn_action edges[KN_JOY_MAX_EDGES]);
/* An axis in -1..1 around the middle of its range, deadzone applied and
 * the rest rescaled to start at 0; 0 when the range is unknown. */
double kn_joy_axis(const struct kn_joy *j, unsigned code);
/* Belt targets L, R (mm/s) for the speed level; false when the sticks are
 * inside the deadzone (the keyboard then decides). */
bool kn_joy_belts(const struct kn_joy *j, double speed, double max, double out[2]);
/* Flipper direction wanted per flipper from held bindings: +1, -1 or 0
 * (up and down together cancel). Returns true when any is non-zero. */
bool kn_joy_flippers(const struct kn_joy *j, int dir[4]);

#endif
