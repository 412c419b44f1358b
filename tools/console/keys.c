/* keys.c: the keyboard map (see keys.h). Capitals act like small letters
 * so Caps Lock never takes the controls away. */
#include "keys.h"

#include <ctype.h>
#include <curses.h>

#include "drive.h"

static struct kn_action drive(enum kn_act act, int dir)
{
    return (struct kn_action){ act, 0, dir };
}

static struct kn_action flip(enum kn_act act, unsigned mask)
{
    return (struct kn_action){ act, (uint8_t)mask, 0 };
}

struct kn_action kn_keys_lookup(int ch, int npresets)
{
    struct kn_action none = { KN_ACT_NONE, 0, 0 };
    switch (ch) {
    case KEY_UP: return drive(KN_ACT_FORWARD, KN_DIR_FORWARD);
    case KEY_DOWN: return drive(KN_ACT_BACK, KN_DIR_BACK);
    case KEY_LEFT: return drive(KN_ACT_LEFT, KN_DIR_LEFT);
    case KEY_RIGHT: return drive(KN_ACT_RIGHT, KN_DIR_RIGHT);
    default: break;
    }
    if (ch < 0 || ch > 127)
        return none;
    if (ch >= '1' && ch <= '9')
        return ch - '1' < npresets ? (struct kn_action){ KN_ACT_PRESET, 0, ch - '1' } : none;
    switch (tolower(ch)) {
    case 'w': return drive(KN_ACT_FORWARD, KN_DIR_FORWARD);
    case 's': return drive(KN_ACT_BACK, KN_DIR_BACK);
    case 'a': return drive(KN_ACT_LEFT, KN_DIR_LEFT);
    case 'd': return drive(KN_ACT_RIGHT, KN_DIR_RIGHT);
    case ' ': return (struct kn_action){ KN_ACT_STOP, 0, 0 };
    case 'e': return (struct kn_action){ KN_ACT_ESTOP, 0, 0 };
    case 'q': return (struct kn_action){ KN_ACT_QUIT, 0, 0 };
    case '?': return (struct kn_action){ KN_ACT_HELP, 0, 0 };
    case 'b': return (struct kn_action){ KN_ACT_TRIAL_RESET, 0, 0 };
    case 'x': return (struct kn_action){ KN_ACT_ASSIST, 0, 0 };
    case '+':
    case '=': return (struct kn_action){ KN_ACT_FASTER, 0, 0 };
    case '-':
    case '_': return (struct kn_action){ KN_ACT_SLOWER, 0, 0 };
    case 'r': return flip(KN_ACT_FLIP_UP, KN_FLIP_FL);
    case 'f': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_FL);
    case 't': return flip(KN_ACT_FLIP_UP, KN_FLIP_FR);
    case 'g': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_FR);
    case 'y': return flip(KN_ACT_FLIP_UP, KN_FLIP_RL);
    case 'h': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_RL);
    case 'u': return flip(KN_ACT_FLIP_UP, KN_FLIP_RR);
    case 'j': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_RR);
    case 'i': return flip(KN_ACT_FLIP_UP, KN_FLIP_FRONT);
    case 'k': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_FRONT);
    case 'o': return flip(KN_ACT_FLIP_UP, KN_FLIP_REAR);
    case 'l': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_REAR);
    case 'p': return flip(KN_ACT_FLIP_UP, KN_FLIP_ALL);
    case ';': return flip(KN_ACT_FLIP_DOWN, KN_FLIP_ALL);
    default: return none;
    }
}

const char *const *kn_keys_help(bool utf8)
{
    static const char *const help_utf8[] = {
        "e E-STOP on/off   q quit (stops)   x assist   ? help   presets:",
        "drive (hold): w/\u2191 fwd  s/\u2193 back  a/\u2190 left  d/\u2192 right   "
        "space STOP   +/- speed",
        "flippers up/down: FL r/f  FR t/g  RL y/h  RR u/j  front i/k  rear o/l  all p/;",
        NULL,
    };
    static const char *const help_ascii[] = {
        "e E-STOP on/off   q quit (stops)   x assist   ? help   presets:",
        "drive (hold): w/Up fwd  s/Down back  a/Left d/Right turn  space STOP  +/- speed",
        "flippers up/down: FL r/f  FR t/g  RL y/h  RR u/j  front i/k  rear o/l  all p/;",
        NULL,
    };
    return utf8 ? help_utf8 : help_ascii;
}

const char *kn_keys_help_short(void)
{
    return "? all keys   e E-STOP   space STOP   x assist   q quit";
}

const char *const *kn_keys_help_screen(bool utf8)
{
    /* two columns; the panel lists the presets after the last line */
    static const char *const keys_utf8[] = {
        "w / \u2191   forward (hold)            r / f   FL flipper up / down",
        "s / \u2193   backward (hold)           t / g   FR flipper up / down",
        "a / \u2190   turn left (hold)          y / h   RL flipper up / down",
        "d / \u2192   turn right (hold)         u / j   RR flipper up / down",
        "space   STOP: belts to 0 now      i / k   front pair up / down",
        "e       E-STOP on / off           o / l   rear pair up / down",
        "+ / -   speed level up / down     p / ;   all four up / down",
        "q       stop the robot and quit   ?       this help",
        "b b     trial: back to the start gate (twice: costs an assist fault)",
        "x       flipper assist on / off (a flipper key, STOP or E-STOP ends it)",
        "1..9    flipper presets:",
        NULL,
    };
    static const char *const keys_ascii[] = {
        "w / Up    forward (hold)            r / f   FL flipper up / down",
        "s / Down  backward (hold)           t / g   FR flipper up / down",
        "a / Left  turn left (hold)          y / h   RL flipper up / down",
        "d / Right turn right (hold)         u / j   RR flipper up / down",
        "space     STOP: belts to 0 now      i / k   front pair up / down",
        "e         E-STOP on / off           o / l   rear pair up / down",
        "+ / -     speed level up / down     p / ;   all four up / down",
        "q         stop the robot and quit   ?       this help",
        "b b       trial: back to the start gate (twice: costs an assist fault)",
        "x         flipper assist on / off (a flipper key, STOP or E-STOP ends it)",
        "1..9      flipper presets:",
        NULL,
    };
    return utf8 ? keys_utf8 : keys_ascii;
}
