/* kenaf-cameras' renderer: pictures of the simulated robot's cameras,
 * drawn with OpenGL ES 3 on EGL without a window system and read back as
 * RGBA pixels. The caller loads a world description and places robots in
 * a scene (scene.h), then asks for shots (camera.h). One renderer belongs
 * to the thread that opened it (its GL context is current there). */
#ifndef KN_RENDER_H
#define KN_RENDER_H

#include "camera.h"
#include "scene.h"

#include <stddef.h>
#include <stdint.h>

#define KN_RENDER_SIZE_MAX 4096 /* the largest width or height of a shot */

struct kn_render;

/* A renderer, or NULL with the reason in err: no EGL library or driver, no
 * display without a window system, no OpenGL ES 3 context, shaders that do
 * not build. The reason is meant for the user (a process exits with it). */
struct kn_render *kn_render_open(char *err, size_t errlen);
void kn_render_close(struct kn_render *r);
/* which EGL display and GL renderer it runs on, for logs */
const char *kn_render_describe(const struct kn_render *r);
/* Draws the shot of scene s into rgba (width * height * 4 bytes, the top
 * row first, alpha 255): 0, or -1 with the reason in err (bad shot, robot
 * not present, size over KN_RENDER_SIZE_MAX, out of memory, a GL error). */
int kn_render_shot(struct kn_render *r, const struct kn_rscene *s, const struct kn_rcam_shot *shot,
                   uint8_t *rgba, char *err, size_t errlen);

#endif
