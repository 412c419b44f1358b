/* keys.h: the console's keyboard map, one table for the main loop, the
 * panel's help lines and docs/console.md. */
#ifndef KN_CONSOLE_KEYS_H
#define KN_CONSOLE_KEYS_H

#include <stdbool.h>

#include "action.h"

/* The action of key ch (a character or an ncurses KEY_* code), given how
 * many presets exist (keys 1..npresets). KN_ACT_NONE for other keys.
 * Drive keys (FORWARD..RIGHT) carry their direction in .preset. */
struct kn_action kn_keys_lookup(int ch, int npresets);

/* The help lines shown at the bottom of the panel (NULL-terminated); the
 * first ends in "presets:" for the panel to list them. */
const char *const *kn_keys_help(bool utf8);
/* One line for a panel without room for the full map. */
const char *kn_keys_help_short(void);
/* The key table of the help screen (NULL-terminated); the last line ends
 * in "presets:" for the panel to list them. */
const char *const *kn_keys_help_screen(bool utf8);

#endif
