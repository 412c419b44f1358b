/* The overlay's drawing and the stamp's reading (stamp.h). The stamp is
 * 2 rows of 36 square blocks inside a white border one block wide, in
 * the top left corner: bit 1 black, bit 0 white, the most significant
 * first, row by row. Its 72 bits are a sync byte 0xA5, the frame counter
 * (24 bits), the robot time in ms (32 bits) and a CRC-8 (polynomial
 * 0x07) of the 8 bytes before it, so a reader tells a stamp from a
 * picture that happens to look like one. A reader averages the middle
 * half of each block, which the 8x8 blocks of JPEG and the 4x4 and
 * 16x16 ones of H.264 keep black or white at the streams' quality. */
#include "stamp.h"

#include <stdbool.h>
#include <stdio.h>

#define SYNC 0xA5u
#define NBITS (KN_STAMP_COLS * KN_STAMP_ROWS)

/* 5x7 digits, ':' and '.': a row a byte, bit 4 the leftmost pixel */
static const uint8_t font[12][7] = {
    { 0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E }, { 0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E },
    { 0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F }, { 0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E },
    { 0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02 }, { 0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E },
    { 0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E }, { 0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 },
    { 0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E }, { 0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C },
    { 0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00 }, { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C },
};

int kn_stamp_block(int width)
{
    int b = width / 80;
    return b < 2 ? 2 : b > 16 ? 16 : b;
}

static bool fits(int width, int height)
{
    int b = kn_stamp_block(width);
    return width >= (KN_STAMP_COLS + 2) * b && height >= (KN_STAMP_ROWS + 2) * b;
}

static uint8_t crc8(const uint8_t *p, size_t n)
{
    uint8_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (uint8_t)(c & 0x80 ? (c << 1) ^ 0x07 : c << 1);
    }
    return c;
}

/* The 9 bytes a stamp carries. */
static void pack(uint32_t frame, uint32_t ms, uint8_t out[9])
{
    out[0] = SYNC;
    out[1] = (uint8_t)(frame >> 16);
    out[2] = (uint8_t)(frame >> 8);
    out[3] = (uint8_t)frame;
    out[4] = (uint8_t)(ms >> 24);
    out[5] = (uint8_t)(ms >> 16);
    out[6] = (uint8_t)(ms >> 8);
    out[7] = (uint8_t)ms;
    out[8] = crc8(out, 8);
}

/* Fills a rectangle, clipped to the picture, with one grey level. */
static void fill(uint8_t *rgba, int width, int height, size_t stride, int x0, int y0, int w, int h,
                 uint8_t v)
{
    for (int y = y0 < 0 ? 0 : y0; y < y0 + h && y < height; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x0 + w && x < width; x++) {
            uint8_t *p = rgba + (size_t)y * stride + (size_t)x * 4;
            p[0] = p[1] = p[2] = v;
            p[3] = 255;
        }
}

void kn_stamp_format(uint64_t robot_ms, char *buf, size_t len)
{
    uint64_t s = robot_ms / 1000;
    snprintf(buf, len, "%llu:%02u:%02u.%03u", (unsigned long long)(s / 3600),
             (unsigned)(s / 60 % 60), (unsigned)(s % 60), (unsigned)(robot_ms % 1000));
}

/* White text on a black box of the band's height, from x0. */
static void text(uint8_t *rgba, int width, int height, size_t stride, int x0, int band,
                 const char *t, int scale)
{
    int n = 0;
    while (t[n])
        n++;
    fill(rgba, width, height, stride, x0, 0, (6 * n + 3) * scale, band, 0);
    int y0 = (band - 7 * scale) / 2;
    for (int i = 0; i < n; i++) {
        int g = t[i] >= '0' && t[i] <= '9' ? t[i] - '0' : t[i] == ':' ? 10 : 11;
        int gx = x0 + (2 + 6 * i) * scale;
        for (int r = 0; r < 7; r++)
            for (int col = 0; col < 5; col++)
                if (font[g][r] & (0x10 >> col))
                    fill(rgba, width, height, stride, gx + col * scale, y0 + r * scale, scale,
                         scale, 255);
    }
}

int kn_stamp_draw(uint8_t *rgba, int width, int height, size_t stride, uint32_t frame,
                  uint64_t robot_ms)
{
    if (!rgba || !fits(width, height))
        return -1;
    int b = kn_stamp_block(width);
    int band = (KN_STAMP_ROWS + 2) * b;
    fill(rgba, width, height, stride, 0, 0, (KN_STAMP_COLS + 2) * b, band, 255);
    uint8_t bytes[9];
    pack(frame & 0xFFFFFFu, (uint32_t)robot_ms, bytes);
    for (int i = 0; i < NBITS; i++)
        if (bytes[i / 8] & (0x80 >> (i % 8)))
            fill(rgba, width, height, stride, (1 + i % KN_STAMP_COLS) * b,
                 (1 + i / KN_STAMP_COLS) * b, b, b, 0);
    char t[32];
    kn_stamp_format(robot_ms, t, sizeof t);
    text(rgba, width, height, stride, (KN_STAMP_COLS + 2) * b, band, t, b / 4 < 1 ? 1 : b / 4);
    return 0;
}

/* The mean luma of the middle half of block i. */
static int block_luma(const uint8_t *px, size_t stride, int bpp, int b, int i)
{
    int x0 = (1 + i % KN_STAMP_COLS) * b + b / 4, y0 = (1 + i / KN_STAMP_COLS) * b + b / 4;
    int side = b / 2 < 1 ? 1 : b / 2;
    long sum = 0;
    for (int y = y0; y < y0 + side; y++)
        for (int x = x0; x < x0 + side; x++) {
            const uint8_t *p = px + (size_t)y * stride + (size_t)x * (size_t)bpp;
            sum += bpp == 1 ? p[0] : (77 * p[0] + 150 * p[1] + 29 * p[2]) >> 8;
        }
    return (int)(sum / (side * side));
}

int kn_stamp_read(const uint8_t *px, int width, int height, size_t stride, int bpp,
                  struct kn_stamp *out)
{
    if (!px || (bpp != 1 && bpp != 3 && bpp != 4) || !fits(width, height) ||
        stride < (size_t)width * (size_t)bpp)
        return -1;
    int b = kn_stamp_block(width);
    uint8_t bytes[9] = { 0 };
    for (int i = 0; i < NBITS; i++)
        if (block_luma(px, stride, bpp, b, i) < 128)
            bytes[i / 8] |= (uint8_t)(0x80 >> (i % 8));
    if (bytes[0] != SYNC || crc8(bytes, 8) != bytes[8])
        return -1;
    out->frame = (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
    out->robot_ms =
        (uint32_t)bytes[4] << 24 | (uint32_t)bytes[5] << 16 | (uint32_t)bytes[6] << 8 | bytes[7];
    return 0;
}

static void red(uint8_t *rgba, int width, int height, size_t stride, int x0, int y0, int w, int h)
{
    for (int y = y0 < 0 ? 0 : y0; y < y0 + h && y < height; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x0 + w && x < width; x++) {
            uint8_t *p = rgba + (size_t)y * stride + (size_t)x * 4;
            p[0] = 230;
            p[1] = 20;
            p[2] = 20;
        }
}

void kn_stamp_stale(uint8_t *rgba, int width, int height, size_t stride)
{
    if (!rgba || width <= 0 || height <= 0)
        return;
    int b = kn_stamp_block(width);
    red(rgba, width, height, stride, 0, height - b, width, b); /* bottom */
    red(rgba, width, height, stride, width - b, 0, b, height); /* right */
    /* the left below the stamp's band; the top holds the stamp and the
     * time, which stay readable */
    int band = (KN_STAMP_ROWS + 2) * b;
    red(rgba, width, height, stride, 0, band, b, height - band);
}

/* Red in the middle of a b x b block at (x0, y0): JPEG and H.264 blur
 * its edges, not its middle. */
static int red_at(const uint8_t *px, size_t stride, int bpp, int x0, int y0, int b)
{
    int x = x0 + b / 2, y = y0 + b / 2;
    const uint8_t *p = px + (size_t)y * stride + (size_t)x * (size_t)bpp;
    return p[0] > 160 && p[1] < 90 && p[2] < 90;
}

int kn_stamp_is_stale(const uint8_t *px, int width, int height, size_t stride, int bpp)
{
    if (!px || (bpp != 3 && bpp != 4) || width < 16 || height < 16 ||
        stride < (size_t)width * (size_t)bpp)
        return 0;
    int b = kn_stamp_block(width);
    return red_at(px, stride, bpp, width - b, height / 2, b) &&
           red_at(px, stride, bpp, width / 2, height - b, b);
}
