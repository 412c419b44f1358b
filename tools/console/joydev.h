/* joydev.h: the gamepad device through evdev (libevdev), hot-plug
 * tolerant: while no device is open the console looks for one every
 * second (by path, by name, or the first gamepad found), and a device
 * that goes away is closed and looked for again. Events feed a kn_joy. */
#ifndef KN_CONSOLE_JOYDEV_H
#define KN_CONSOLE_JOYDEV_H

#include <stdbool.h>
#include <stddef.h>

#include "joy.h"

#define KN_JOYDEV_RETRY_S 1.0

struct libevdev;

struct kn_joydev {
    char spec[KN_CONF_DEVICE_LEN]; /* "auto", "none", a path, "name:..." */
    struct libevdev *dev;
    int fd;
    char path[256];
    char name[128];
    double next_try;
    char why[640]; /* why nothing is open */
    unsigned long opens, losses;
};

void kn_joydev_init(struct kn_joydev *d, const char *spec);
/* When nothing is open and a try is due, tries to open a device and loads
 * its ranges and button states into j. True when a device was opened now. */
bool kn_joydev_try_open(struct kn_joydev *d, struct kn_joy *j, double now);
/* The open device's fd, or -1. */
int kn_joydev_fd(const struct kn_joydev *d);
/* Reads every pending event into j; presses with an action go to
 * on_press. Returns 0, or -1 when the device went away (it is then
 * closed, j reset, and looked for again after a second). */
int kn_joydev_read(struct kn_joydev *d, struct kn_joy *j, double now,
                   void (*on_press)(void *ctx, const struct kn_action *a), void *ctx);
void kn_joydev_close(struct kn_joydev *d);
/* One line for the panel. */
void kn_joydev_describe(const struct kn_joydev *d, char *buf, size_t len);

#endif
