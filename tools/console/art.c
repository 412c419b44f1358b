/* art.c: the flipper side view (see art.h). */
#include "art.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Flipper length in columns when flat, in rows when upright; a text cell
 * is about twice as high as wide, so these look alike. */
#define LEN_COLS 7.0
#define LEN_ROWS 3.4

static void put(struct kn_art *a, int row, int col, const char *s)
{
    if (row >= 0 && row < KN_ART_ROWS && col >= 0 && col < KN_ART_COLS)
        snprintf(a->cell[row][col], sizeof a->cell[row][col], "%s", s);
}

/* A flipper from the axle at (row, col): side = +1 for the front (pointing
 * right), -1 for the rear (pointing left). The line steps one cell at a
 * time along its longer axis; a step that also moves along the other axis
 * is a diagonal stroke, so a shallow flipper reads as a staircase and an
 * upright one as a post. */
static void flipper(struct kn_art *a, int row, int col, int side, double deg, bool utf8)
{
    if (!isfinite(deg))
        return;
    double th = deg * M_PI / 180.0;
    double dx = side * LEN_COLS * cos(th), dy = -LEN_ROWS * sin(th); /* screen rows grow down */
    bool along_cols = fabs(dx) >= fabs(dy);
    int steps = (int)lround(along_cols ? fabs(dx) : fabs(dy));
    int pr = row, pc = col;
    for (int i = 1; i <= steps; i++) {
        double t = (double)i / steps;
        int r = (int)lround(row + t * dy), c = (int)lround(col + t * dx);
        const char *stroke;
        if (r == pr)
            stroke = utf8 ? "\u2500" : "-";
        else if (c == pc)
            stroke = utf8 ? "\u2502" : "|";
        else if ((c > pc) == (r < pr)) /* right and up, or left and down */
            stroke = utf8 ? "\u2571" : "/";
        else
            stroke = utf8 ? "\u2572" : "\\";
        put(a, r, c, i == steps ? (utf8 ? "\u25cf" : "o") : stroke); /* a dot at the tip */
        pr = r;
        pc = c;
    }
}

void kn_art_side(struct kn_art *a, double front_deg, double rear_deg, bool utf8)
{
    for (int r = 0; r < KN_ART_ROWS; r++)
        for (int c = 0; c < KN_ART_COLS; c++)
            put(a, r, c, " ");
    int top = KN_ART_AXLE_ROW - 1, bottom = KN_ART_AXLE_ROW + 1;
    for (int c = KN_ART_REAR_COL + 1; c < KN_ART_FRONT_COL; c++) {
        put(a, top, c, utf8 ? "\u2500" : "-");
        put(a, bottom, c, utf8 ? "\u2500" : "-");
    }
    put(a, top, KN_ART_REAR_COL, utf8 ? "\u256d" : "/");
    put(a, bottom, KN_ART_REAR_COL, utf8 ? "\u2570" : "\\");
    put(a, top, KN_ART_FRONT_COL, utf8 ? "\u256e" : "\\");
    put(a, bottom, KN_ART_FRONT_COL, utf8 ? "\u256f" : "/");
    flipper(a, KN_ART_AXLE_ROW, KN_ART_REAR_COL, -1, rear_deg, utf8);
    flipper(a, KN_ART_AXLE_ROW, KN_ART_FRONT_COL, 1, front_deg, utf8);
    /* axles drawn last: the flippers pivot there */
    put(a, KN_ART_AXLE_ROW, KN_ART_REAR_COL, utf8 ? "\u25c9" : "O");
    put(a, KN_ART_AXLE_ROW, KN_ART_FRONT_COL, utf8 ? "\u25c9" : "O");
}

void kn_art_row(const struct kn_art *a, int row, char *buf, size_t len)
{
    size_t n = 0;
    if (len == 0)
        return;
    buf[0] = '\0';
    if (row < 0 || row >= KN_ART_ROWS)
        return;
    for (int c = 0; c < KN_ART_COLS; c++) {
        size_t k = strlen(a->cell[row][c]);
        if (n + k + 1 > len)
            break;
        memcpy(buf + n, a->cell[row][c], k);
        n += k;
    }
    buf[n] = '\0';
}
