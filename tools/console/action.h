/* action.h: what an operator input asks for. The keyboard table and the
 * joystick bindings both produce these, so the main loop has one place
 * that turns intent into hrt_* calls. */
#ifndef KN_CONSOLE_ACTION_H
#define KN_CONSOLE_ACTION_H

#include <stdint.h>

enum kn_act {
    KN_ACT_NONE = 0,
    KN_ACT_FORWARD, /* keyboard drive: held while the key repeats */
    KN_ACT_BACK,
    KN_ACT_LEFT,
    KN_ACT_RIGHT,
    KN_ACT_STOP,   /* belts to 0 at once */
    KN_ACT_ESTOP,  /* emergency stop toggle */
    KN_ACT_QUIT,   /* stop, then leave */
    KN_ACT_FASTER, /* speed level up one step */
    KN_ACT_SLOWER,
    KN_ACT_FLIP_UP, /* flippers in .mask tip up (a step per key, a rate while a button is held) */
    KN_ACT_FLIP_DOWN,
    KN_ACT_PRESET,      /* flippers to preset .preset */
    KN_ACT_HELP,        /* the help screen (keys, flags) until the next key */
    KN_ACT_TRIAL_RESET, /* a judged trial: back to the start gate (asks to confirm first) */
    KN_ACT_ASSIST,      /* the flipper assist on / off */
};

/* Flipper masks: bit k is flipper k (HRT_FLIPPER_FL = 0 ... RR = 3). */
#define KN_FLIP_FL 0x1u
#define KN_FLIP_FR 0x2u
#define KN_FLIP_RL 0x4u
#define KN_FLIP_RR 0x8u
#define KN_FLIP_FRONT (KN_FLIP_FL | KN_FLIP_FR)
#define KN_FLIP_REAR (KN_FLIP_RL | KN_FLIP_RR)
#define KN_FLIP_ALL 0xFu

struct kn_action {
    enum kn_act act;
    uint8_t mask; /* KN_ACT_FLIP_*: which flippers */
    int preset;   /* KN_ACT_PRESET: index into the config's presets */
};

/* Flipper moves act while held; the others act once per press. */
static inline int kn_action_is_held(const struct kn_action *a)
{
    return a->act == KN_ACT_FLIP_UP || a->act == KN_ACT_FLIP_DOWN;
}

#endif
