/* joy.c: gamepad state to targets and actions (see joy.h). */
#include "joy.h"

#include <math.h>
#include <string.h>

#include <linux/input-event-codes.h>

void kn_joy_init(struct kn_joy *j, const struct kn_conf *c)
{
    memset(j, 0, sizeof *j);
    j->conf = c;
}

void kn_joy_reset(struct kn_joy *j)
{
    const struct kn_conf *c = j->conf;
    kn_joy_init(j, c);
}

/* A binding's pressed state from the current values. An axis direction is
 * pressed beyond three quarters of the range that way (so a hat -1..1 at
 * its end, a trigger 0..1023 above 767, a stick pushed well over). */
static bool binding_pressed(const struct kn_joy *j, const struct kn_binding *b)
{
    if (b->type == EV_KEY)
        return b->code < sizeof j->key && j->key[b->code];
    if (b->type != EV_ABS || b->code >= 64 || !j->range[b->code].known)
        return false;
    const struct kn_joy_range *r = &j->range[b->code];
    double span = (double)r->max - r->min;
    double v = j->value[b->code];
    return b->dir > 0 ? v >= r->min + 0.75 * span : v <= r->min + 0.25 * span;
}

/* Updates the state and the bindings on (type, code); presses that start
 * here go to edges when edges is not NULL. */
static int update(struct kn_joy *j, unsigned type, unsigned code, int value,
                  struct kn_action *edges)
{
    if (type == EV_KEY && code < sizeof j->key)
        j->key[code] = value != 0; /* 1 press, 2 auto-repeat, 0 release */
    else if (type == EV_ABS && code < 64)
        j->value[code] = value;
    else
        return 0;
    int n = 0;
    const struct kn_conf *c = j->conf;
    for (int i = 0; i < c->nbindings; i++) {
        const struct kn_binding *b = &c->bindings[i];
        if (b->type != type || b->code != code)
            continue;
        bool now = binding_pressed(j, b);
        if (edges && now && !j->pressed[i] && !kn_action_is_held(&b->action) &&
            n < KN_JOY_MAX_EDGES)
            edges[n++] = b->action;
        j->pressed[i] = now;
    }
    return n;
}

int kn_joy_event(struct kn_joy *j, unsigned type, unsigned code, int value,
                 struct kn_action edges[KN_JOY_MAX_EDGES])
{
    return update(j, type, code, value, edges);
}

void kn_joy_set_range(struct kn_joy *j, unsigned code, int min, int max, int value)
{
    if (code >= 64)
        return;
    j->range[code] = (struct kn_joy_range){ min, max, max > min };
    update(j, EV_ABS, code, value, NULL); /* a trigger held at plug-in acts on its next change */
}

void kn_joy_set_key(struct kn_joy *j, unsigned code, bool down)
{
    update(j, EV_KEY, code, down, NULL);
}

double kn_joy_axis(const struct kn_joy *j, unsigned code)
{
    if (code >= 64 || !j->range[code].known)
        return 0;
    const struct kn_joy_range *r = &j->range[code];
    double mid = ((double)r->min + r->max) / 2, half = ((double)r->max - r->min) / 2;
    double x = (j->value[code] - mid) / half;
    if (x > 1)
        x = 1;
    if (x < -1)
        x = -1;
    double dz = j->conf->deadzone;
    if (fabs(x) <= dz)
        return 0;
    return (x > 0 ? 1 : -1) * (fabs(x) - dz) / (1 - dz);
}

bool kn_joy_belts(const struct kn_joy *j, double speed, double max, double out[2])
{
    const struct kn_conf *c = j->conf;
    double thr = kn_joy_axis(j, c->throttle.axis) * (c->throttle.invert ? -1 : 1);
    double turn = kn_joy_axis(j, c->turn.axis) * (c->turn.invert ? -1 : 1);
    out[0] = out[1] = 0;
    if (thr == 0 && turn == 0)
        return false;
    kn_drive_mix(thr * speed, turn * speed * c->joy_turn_ratio, max, out);
    return true;
}

bool kn_joy_flippers(const struct kn_joy *j, int dir[4])
{
    const struct kn_conf *c = j->conf;
    bool any = false;
    for (int k = 0; k < 4; k++)
        dir[k] = 0;
    for (int i = 0; i < c->nbindings; i++) {
        const struct kn_action *a = &c->bindings[i].action;
        if (!j->pressed[i] || !kn_action_is_held(a))
            continue;
        for (int k = 0; k < 4; k++)
            if (a->mask & (1u << k))
                dir[k] += a->act == KN_ACT_FLIP_UP ? 1 : -1;
    }
    for (int k = 0; k < 4; k++) {
        dir[k] = dir[k] > 0 ? 1 : dir[k] < 0 ? -1 : 0;
        any |= dir[k] != 0;
    }
    return any;
}
