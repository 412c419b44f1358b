/* The time in every frame: the robot time as text a person reads and a
 * stamp a program reads (a frame counter and the robot time in ms, as
 * black and white blocks big enough to survive H.264 and JPEG), drawn
 * into a picture after it is rendered, and read back from a decoded one.
 * Sans-I/O: pixels in, pixels or numbers out. docs/cameras.md#the-overlay
 * gives the layout. */
#ifndef KN_STAMP_H
#define KN_STAMP_H

#include <stddef.h>
#include <stdint.h>

#define KN_STAMP_COLS 36 /* blocks a row */
#define KN_STAMP_ROWS 2  /* 72 bits: sync 8, frame 24, robot ms 32, CRC-8 8 */

struct kn_stamp {
    uint32_t frame;    /* the low 24 bits of the frame counter */
    uint32_t robot_ms; /* the low 32 bits of the robot time in ms */
};

/* The side of one block in pixels for a picture `width` wide (8 at 640). */
int kn_stamp_block(int width);

/* Draws the stamp of (frame, robot_ms) in the top left corner of an RGBA
 * picture (rows `stride` bytes apart), and to its right the robot time as
 * H:MM:SS.mmm. 0, or -1 (nothing drawn) when the picture is too small for
 * the stamp. */
int kn_stamp_draw(uint8_t *rgba, int width, int height, size_t stride, uint32_t frame,
                  uint64_t robot_ms);

/* Reads the stamp of a picture of `bpp` bytes a pixel (1: grey, 3: RGB,
 * 4: RGBA), rows `stride` bytes apart: 0 and *out, or -1 when there is no
 * valid stamp (wrong sync pattern or CRC, picture too small). */
int kn_stamp_read(const uint8_t *px, int width, int height, size_t stride, int bpp,
                  struct kn_stamp *out);

/* Marks a picture stale (its robot's daemon has gone quiet and the pose
 * is the last one known): red bars one block wide along its left, right
 * and bottom edges; the top, with the stamp and the time, stays clear. */
void kn_stamp_stale(uint8_t *rgba, int width, int height, size_t stride);
/* Whether a decoded picture (bpp as kn_stamp_read) carries that frame:
 * the middles of its right and bottom edges red. */
int kn_stamp_is_stale(const uint8_t *px, int width, int height, size_t stride, int bpp);

/* The robot time as the overlay writes it ("0:01:02.345"), into buf. */
void kn_stamp_format(uint64_t robot_ms, char *buf, size_t len);

#endif
