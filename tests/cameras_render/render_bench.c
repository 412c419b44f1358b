/* How long the cameras' renderer takes for one picture: flat ground and
 * one Kenaf at 640x480 (or the size given), each camera in turn, the
 * robot moving a little between shots; prints milliseconds per frame. Not
 * a test: its figure depends on the machine. With a directory, it also
 * writes the last picture of each camera there as a PPM to look at, and
 * with a world description file it draws that world instead.
 *   render_bench [FRAMES [WIDTH HEIGHT [DIR [WORLD.json]]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render.h"
#include "render_world.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_ppm(const char *dir, const char *name, const uint8_t *rgba, int w, int h)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.ppm", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fprintf(f, "P6\n%d %d\n255\n", w, h);
    for (int i = 0; i < w * h; i++)
        fwrite(rgba + 4 * i, 1, 3, f);
    return fclose(f);
}

/* the whole file, NUL-terminated, or NULL */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    if (f)
        fclose(f);
    return buf;
}

/* Times each camera on scene s; 0, or 1 after saying why. */
static int bench(struct kn_render *r, struct kn_rscene *s, int frames, int w, int h,
                 const char *dir, uint8_t *rgba)
{
    static const char *names[2] = { "ptz", "bird" };
    char err[256];
    for (int cam = KN_RCAM_PTZ; cam <= KN_RCAM_BIRD; cam++) {
        struct kn_rcam_shot shot = { .cam = cam, .zoom = 1, .width = w, .height = h };
        double t0 = 0;
        for (int i = -1; i < frames; i++) { /* frame -1 warms up: uploads, shader */
            struct kn_rscene_robot robot = render_world_robot(0.01 * i, 0, 0);
            kn_rscene_robot_set(s, 0, &robot);
            if (i == 0)
                t0 = now_s();
            if (kn_render_shot(r, s, &shot, rgba, err, sizeof err) != 0) {
                fprintf(stderr, "render_bench: %s\n", err);
                return 1;
            }
        }
        double ms = 1e3 * (now_s() - t0) / frames;
        printf("%s %dx%d: %.2f ms per frame (%d frames, %.1f frames/s)\n", names[cam], w, h, ms,
               frames, 1e3 / ms);
        if (dir && write_ppm(dir, names[cam], rgba, w, h) != 0)
            fprintf(stderr, "render_bench: cannot write %s/%s.ppm\n", dir, names[cam]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 50;
    int w = argc > 3 ? atoi(argv[2]) : 640, h = argc > 3 ? atoi(argv[3]) : 480;
    const char *dir = argc > 4 ? argv[4] : NULL;
    char err[256] = "bad arguments";
    struct kn_rscene s;
    if (frames < 1 || w < 1 || h < 1 || w > KN_RENDER_SIZE_MAX || h > KN_RENDER_SIZE_MAX ||
        kn_rscene_init(&s) != 0) {
        fprintf(stderr, "render_bench: %s\n", err);
        return 1;
    }
    char *world = argc > 5 ? read_file(argv[5]) : NULL;
    const char *doc = world ? world : RENDER_WORLD_FLAT;
    uint8_t *rgba = malloc((size_t)w * (size_t)h * 4);
    struct kn_render *r = NULL;
    int rc = 1;
    if (argc > 5 && !world)
        fprintf(stderr, "render_bench: cannot read %s\n", argv[5]);
    else if (kn_rscene_load(&s, doc, strlen(doc), err, sizeof err) != 0 || !rgba ||
             !(r = kn_render_open(err, sizeof err)))
        fprintf(stderr, "render_bench: %s\n", rgba ? err : "out of memory");
    else {
        printf("renderer: %s\n", kn_render_describe(r));
        rc = bench(r, &s, frames, w, h, dir, rgba);
    }
    kn_render_close(r);
    kn_rscene_free(&s);
    free(rgba);
    free(world);
    return rc;
}
