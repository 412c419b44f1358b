/* joydev.c: evdev gamepad, opened and re-opened as it comes and goes
 * (see joydev.h). */
#include "joydev.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libevdev/libevdev.h>

#define INPUT_DIR "/dev/input"

void kn_joydev_init(struct kn_joydev *d, const char *spec)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
    snprintf(d->spec, sizeof d->spec, "%s", spec);
    if (strcmp(spec, "none") == 0)
        snprintf(d->why, sizeof d->why, "off (keyboard only)");
    else
        snprintf(d->why, sizeof d->why, "not looked for yet");
}

int kn_joydev_fd(const struct kn_joydev *d)
{
    return d->dev ? d->fd : -1;
}

void kn_joydev_close(struct kn_joydev *d)
{
    if (d->dev)
        libevdev_free(d->dev);
    d->dev = NULL;
    if (d->fd >= 0)
        close(d->fd);
    d->fd = -1;
}

/* A gamepad or joystick: the configured sticks' axes and a button in the
 * joystick/gamepad block (touchpads and tablets have axes but none). */
static bool looks_like_pad(struct libevdev *dev, const struct kn_conf *c)
{
    if (!libevdev_has_event_code(dev, EV_ABS, c->throttle.axis) ||
        !libevdev_has_event_code(dev, EV_ABS, c->turn.axis))
        return false;
    for (unsigned code = BTN_JOYSTICK; code < BTN_DIGI; code++)
        if (libevdev_has_event_code(dev, EV_KEY, code))
            return true;
    return false;
}

/* Opens path; -errno, or 1 when it is not what the spec wants, or 0. */
static int open_one(struct kn_joydev *d, const char *path, const struct kn_conf *c, bool by_name)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    struct libevdev *dev = NULL;
    int rc = libevdev_new_from_fd(fd, &dev);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    const char *name = libevdev_get_name(dev) ? libevdev_get_name(dev) : "";
    bool want;
    if (by_name)
        want = strcmp(name, d->spec + 5) == 0;
    else
        want = looks_like_pad(dev, c);
    if (!want) {
        libevdev_free(dev);
        close(fd);
        return 1;
    }
    d->dev = dev;
    d->fd = fd;
    snprintf(d->path, sizeof d->path, "%s", path);
    snprintf(d->name, sizeof d->name, "%s", name);
    return 0;
}

static int event_number(const struct dirent *e)
{
    return atoi(e->d_name + 5);
}

static int by_number(const struct dirent **a, const struct dirent **b)
{
    return event_number(*a) - event_number(*b);
}

static int is_event(const struct dirent *e)
{
    return strncmp(e->d_name, "event", 5) == 0;
}

/* The first device under /dev/input that fits ("auto" or "name:"). */
static bool scan(struct kn_joydev *d, const struct kn_conf *c)
{
    bool by_name = strncmp(d->spec, "name:", 5) == 0;
    struct dirent **list = NULL;
    int n = scandir(INPUT_DIR, &list, is_event, by_number);
    if (n < 0) {
        if (errno == ENOENT)
            snprintf(d->why, sizeof d->why, "none (no %s on this machine)", INPUT_DIR);
        else
            snprintf(d->why, sizeof d->why, "%s: %s", INPUT_DIR, strerror(errno));
        return false;
    }
    int denied = 0;
    bool found = false;
    for (int i = 0; i < n; i++) {
        if (!found) {
            char path[300];
            snprintf(path, sizeof path, INPUT_DIR "/%s", list[i]->d_name);
            int rc = open_one(d, path, c, by_name);
            found = rc == 0;
            denied += rc == -EACCES || rc == -EPERM;
        }
        free(list[i]);
    }
    free(list);
    if (!found) {
        char what[300];
        if (by_name)
            snprintf(what, sizeof what, "no device named \"%s\"", d->spec + 5);
        else
            snprintf(what, sizeof what, "no gamepad found");
        if (denied)
            snprintf(d->why, sizeof d->why,
                     "%s (%d input devices not readable: permission; "
                     "join group \"input\")",
                     what, denied);
        else
            snprintf(d->why, sizeof d->why, "%s", what);
    }
    return found;
}

bool kn_joydev_try_open(struct kn_joydev *d, struct kn_joy *j, double now)
{
    if (d->dev || strcmp(d->spec, "none") == 0 || now < d->next_try)
        return false;
    d->next_try = now + KN_JOYDEV_RETRY_S;
    const struct kn_conf *c = j->conf;
    bool ok;
    if (d->spec[0] == '/') {
        int rc = open_one(d, d->spec, c, false);
        ok = rc == 0;
        if (rc == 1)
            snprintf(d->why, sizeof d->why, "%s is not a gamepad (no %s/%s axes or no buttons)",
                     d->spec, libevdev_event_code_get_name(EV_ABS, c->throttle.axis),
                     libevdev_event_code_get_name(EV_ABS, c->turn.axis));
        else if (rc == -EACCES || rc == -EPERM)
            snprintf(d->why, sizeof d->why, "%s: %s (join group \"input\")", d->spec,
                     strerror(-rc));
        else if (rc < 0)
            snprintf(d->why, sizeof d->why, "%s: %s", d->spec, strerror(-rc));
    } else {
        ok = scan(d, c);
    }
    if (!ok)
        return false;
    kn_joy_reset(j);
    for (unsigned code = 0; code < 64; code++) {
        const struct input_absinfo *ai = libevdev_get_abs_info(d->dev, code);
        if (ai && libevdev_has_event_code(d->dev, EV_ABS, code))
            kn_joy_set_range(j, code, ai->minimum, ai->maximum, ai->value);
    }
    for (int i = 0; i < c->nbindings; i++)
        if (c->bindings[i].type == EV_KEY)
            kn_joy_set_key(j, c->bindings[i].code,
                           libevdev_get_event_value(d->dev, EV_KEY, c->bindings[i].code) != 0);
    d->opens++;
    d->why[0] = '\0';
    return true;
}

static void feed(struct kn_joy *j, const struct input_event *ev,
                 void (*on_press)(void *, const struct kn_action *), void *ctx)
{
    struct kn_action edges[KN_JOY_MAX_EDGES];
    int n = kn_joy_event(j, ev->type, ev->code, ev->value, edges);
    for (int i = 0; i < n; i++)
        if (on_press)
            on_press(ctx, &edges[i]);
}

int kn_joydev_read(struct kn_joydev *d, struct kn_joy *j, double now,
                   void (*on_press)(void *ctx, const struct kn_action *a), void *ctx)
{
    if (!d->dev)
        return 0;
    for (int guard = 0; guard < 4096; guard++) {
        struct input_event ev;
        int rc = libevdev_next_event(d->dev, LIBEVDEV_READ_FLAG_NORMAL, &ev);
        if (rc == LIBEVDEV_READ_STATUS_SUCCESS) {
            feed(j, &ev, on_press, ctx);
        } else if (rc == LIBEVDEV_READ_STATUS_SYNC) {
            /* events were dropped: libevdev replays the device's state */
            while ((rc = libevdev_next_event(d->dev, LIBEVDEV_READ_FLAG_SYNC, &ev)) ==
                   LIBEVDEV_READ_STATUS_SYNC)
                feed(j, &ev, on_press, ctx);
            if (rc != -EAGAIN && rc != LIBEVDEV_READ_STATUS_SUCCESS)
                goto lost;
        } else if (rc == -EAGAIN || rc == -EINTR) {
            return 0;
        } else {
            goto lost;
        }
    }
    return 0;
lost:
    snprintf(d->why, sizeof d->why, "%s (%s) went away; looking for it again", d->path, d->name);
    kn_joydev_close(d);
    kn_joy_reset(j);
    d->losses++;
    d->next_try = now + KN_JOYDEV_RETRY_S;
    return -1;
}

void kn_joydev_describe(const struct kn_joydev *d, char *buf, size_t len)
{
    if (d->dev)
        snprintf(buf, len, "joystick: %s \"%s\" connected", d->path, d->name);
    else if (strcmp(d->spec, "none") == 0)
        snprintf(buf, len, "joystick: off (keyboard only)");
    else
        snprintf(buf, len, "joystick: %s", d->why);
}
