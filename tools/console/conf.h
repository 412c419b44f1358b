/* conf.h: the console's settings and joystick mapping (console.json).
 *
 * The file may leave any key out: what it does not set keeps the built-in
 * default, which is exactly what config/console.json ships (a unit test
 * holds the two together). "presets" and "joystick.buttons", when given,
 * replace the default set as a whole. Every problem is reported, one line
 * each, naming the file, the JSON path, what was expected and what was
 * found, like kenaf-simd's config. */
#ifndef KN_CONSOLE_CONF_H
#define KN_CONSOLE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "action.h"
#include "drive.h"

#define KN_CONF_MAX_PRESETS 9 /* keys 1..9 */
#define KN_CONF_PRESET_NAME 16
#define KN_CONF_MAX_BINDINGS 32
#define KN_CONF_DEVICE_LEN 256
#define KN_CONF_MAX_BYTES (1 << 20)

struct kn_preset {
    char name[KN_CONF_PRESET_NAME];
    double deg[4]; /* FL, FR, RL, RR */
};

/* One joystick input bound to an action. source is the name as written:
 * an EV_KEY code ("BTN_SOUTH") or an axis direction ("ABS_HAT0Y-",
 * "ABS_Z+": pressed beyond three quarters of the axis range that way). */
struct kn_binding {
    char source[32];
    uint16_t type; /* EV_KEY or EV_ABS */
    uint16_t code;
    int8_t dir; /* EV_ABS: +1 or -1 */
    struct kn_action action;
};

struct kn_stick {
    uint16_t axis; /* ABS_* code */
    bool invert;
};

struct kn_conf {
    struct kn_drive_conf drive;
    double flipper_min_deg, flipper_max_deg;
    double flipper_step_deg;   /* one key press */
    double flipper_rate_deg_s; /* a held joystick button */
    int npresets;
    struct kn_preset presets[KN_CONF_MAX_PRESETS];
    char joy_device[KN_CONF_DEVICE_LEN]; /* "auto", "none", "/dev/input/...", "name:..." */
    struct kn_stick throttle, turn;
    double deadzone;       /* fraction of the half range */
    double joy_turn_ratio; /* full turn deflection, fraction of the speed level */
    int nbindings;
    struct kn_binding bindings[KN_CONF_MAX_BINDINGS];
};

/* The built-in defaults (a common gamepad with the Linux gamepad layout). */
void kn_conf_defaults(struct kn_conf *c);

/* Parses JSON text over the defaults. name labels the messages. Returns 0,
 * or the number of problems, with one line each in err (truncated to
 * errlen; *c is then unspecified). */
int kn_conf_parse(struct kn_conf *c, const char *text, size_t len, const char *name, char *err,
                  size_t errlen);
/* Reads and parses a file; an unreadable, empty, too large (1 MiB) file is
 * one problem. */
int kn_conf_load(struct kn_conf *c, const char *path, char *err, size_t errlen);

/* Text of an action as the config writes it ("preset:stairs", "front_up"). */
void kn_conf_action_name(const struct kn_conf *c, const struct kn_action *a, char *buf, size_t len);

#endif
