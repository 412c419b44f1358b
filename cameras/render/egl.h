/* An OpenGL ES 3 context without a window system for the camera renderer:
 * on an EGL device when the machine has a GPU one, else on Mesa's
 * surfaceless platform (llvmpipe on a machine without a GPU). The context
 * is made current on the calling thread and renders into framebuffer
 * objects only. */
#ifndef KN_RENDER_EGL_H
#define KN_RENDER_EGL_H

#include <EGL/egl.h>
#include <stddef.h>

struct kn_regl {
    EGLDisplay dpy;
    EGLContext ctx;
    char what[160]; /* which display and renderer, for logs */
};

/* 0, or -1 with the reason in err (no EGL library or driver, no display
 * without a window system, no OpenGL ES 3 context); nothing to close then */
int kn_regl_open(struct kn_regl *e, char *err, size_t errlen);
void kn_regl_close(struct kn_regl *e);

#endif
