/* art.h: a small side view of the robot with its flipper poses, drawn in
 * box-drawing characters (or ASCII), without any I/O. The view has the
 * front on the right: main track in the middle, the rear flipper on the
 * rear axle (left end), the front flipper on the front axle (right end),
 * each a line at its angle (0 = in line with the track pointing outward,
 * + = tip up). */
#ifndef KN_CONSOLE_ART_H
#define KN_CONSOLE_ART_H

#include <stdbool.h>
#include <stddef.h>

#define KN_ART_ROWS 7
#define KN_ART_COLS 30
#define KN_ART_AXLE_ROW 3
#define KN_ART_REAR_COL 8
#define KN_ART_FRONT_COL 21

struct kn_art {
    char cell[KN_ART_ROWS][KN_ART_COLS][4]; /* one character each, UTF-8 */
};

/* Draws one side. A NaN angle leaves that flipper out (unknown). */
void kn_art_side(struct kn_art *a, double front_deg, double rear_deg, bool utf8);
/* One row as a string (at most KN_ART_COLS characters). */
void kn_art_row(const struct kn_art *a, int row, char *buf, size_t len);

#endif
