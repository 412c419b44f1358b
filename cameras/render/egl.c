/* The camera renderer's GL context (egl.h). Display first from a GPU's
 * EGL device (EGL_EXT_device_enumeration, EGL_EXT_platform_device), else
 * Mesa's surfaceless platform (EGL_MESA_platform_surfaceless); both need
 * no X or Wayland, so the renderer runs in a service. No surface: the
 * renderer draws into framebuffer objects (EGL_KHR_surfaceless_context). */
#include "egl.h"

#include <EGL/eglext.h>
#include <GLES3/gl3.h>
#include <stdio.h>
#include <string.h>

/* whole-word match in a space-separated extension list */
static int has_ext(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    return 0;
}

/* An OpenGL ES 3.0 context current on dpy, or the reason it failed. */
static int make_context(struct kn_regl *e, char *err, size_t errlen)
{
    EGLint major, minor;
    if (!eglInitialize(e->dpy, &major, &minor)) {
        snprintf(err, errlen, "eglInitialize failed (EGL error 0x%x)", (unsigned)eglGetError());
        return -1;
    }
    const char *ext = eglQueryString(e->dpy, EGL_EXTENSIONS);
    if (!has_ext(ext, "EGL_KHR_surfaceless_context")) {
        snprintf(err, errlen, "EGL %d.%d display without EGL_KHR_surfaceless_context", major,
                 minor);
        return -1;
    }
    const EGLint want[] = { EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_NONE };
    EGLConfig cfg = NULL;
    EGLint n = 0;
    if (!has_ext(ext, "EGL_KHR_no_config_context") &&
        (!eglChooseConfig(e->dpy, want, &cfg, 1, &n) || n < 1)) {
        snprintf(err, errlen, "EGL %d.%d display has no OpenGL ES 3 config", major, minor);
        return -1;
    }
    const EGLint attrs[] = { EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 0, EGL_NONE };
    if (!eglBindAPI(EGL_OPENGL_ES_API) ||
        (e->ctx = eglCreateContext(e->dpy, n ? cfg : (EGLConfig)0, EGL_NO_CONTEXT, attrs)) ==
            EGL_NO_CONTEXT) {
        snprintf(err, errlen, "no OpenGL ES 3.0 context (EGL error 0x%x)", (unsigned)eglGetError());
        return -1;
    }
    if (!eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, e->ctx)) {
        snprintf(err, errlen, "eglMakeCurrent failed (EGL error 0x%x)", (unsigned)eglGetError());
        return -1;
    }
    const char *ver = (const char *)glGetString(GL_VERSION);
    if (!ver || strncmp(ver, "OpenGL ES 3", 11) != 0) {
        snprintf(err, errlen, "context is not OpenGL ES 3 (%s)", ver ? ver : "no GL_VERSION");
        return -1;
    }
    return 0;
}

/* Undoes a failed or finished make_context. The display stays
 * initialised: it is the process's (the same handle comes back on the
 * next open), and eglTerminate unloads Mesa's driver leaving 368 bytes of
 * it behind each time (LeakSanitizer), so it is left to the exit. */
static void drop(struct kn_regl *e)
{
    if (e->dpy == EGL_NO_DISPLAY)
        return;
    eglMakeCurrent(e->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (e->ctx != EGL_NO_CONTEXT)
        eglDestroyContext(e->dpy, e->ctx);
    eglReleaseThread();
    e->dpy = EGL_NO_DISPLAY;
    e->ctx = EGL_NO_CONTEXT;
}

/* A GPU's EGL device: Mesa's software device is left to the surfaceless
 * platform, which is the same llvmpipe under a name that says so. */
static int try_devices(struct kn_regl *e, PFNEGLGETPLATFORMDISPLAYEXTPROC get_display, char *err,
                       size_t errlen)
{
    PFNEGLQUERYDEVICESEXTPROC query =
        (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
    PFNEGLQUERYDEVICESTRINGEXTPROC dev_string =
        (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
    EGLDeviceEXT devs[8];
    EGLint n = 0;
    if (!query || !dev_string || !query(8, devs, &n))
        return -1;
    for (EGLint i = 0; i < n; i++) {
        const char *ext = dev_string(devs[i], EGL_EXTENSIONS);
        if (has_ext(ext, "EGL_MESA_device_software"))
            continue;
        e->dpy = get_display(EGL_PLATFORM_DEVICE_EXT, devs[i], NULL);
        if (e->dpy != EGL_NO_DISPLAY && make_context(e, err, errlen) == 0) {
            snprintf(e->what, sizeof e->what, "EGL device %d", (int)i);
            return 0;
        }
        drop(e);
    }
    return -1;
}

int kn_regl_open(struct kn_regl *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->dpy = EGL_NO_DISPLAY;
    e->ctx = EGL_NO_CONTEXT;
    const char *cext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!cext || !get_display || !has_ext(cext, "EGL_EXT_platform_base")) {
        snprintf(err, errlen,
                 "no EGL driver with EGL_EXT_platform_base (is libegl-mesa0 "
                 "installed?)");
        return -1;
    }
    snprintf(err, errlen, "no EGL device and no EGL_MESA_platform_surfaceless");
    if (has_ext(cext, "EGL_EXT_device_enumeration") && has_ext(cext, "EGL_EXT_platform_device") &&
        try_devices(e, get_display, err, errlen) == 0)
        goto done;
    if (!has_ext(cext, "EGL_MESA_platform_surfaceless"))
        return -1;
    e->dpy = get_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL);
    if (e->dpy == EGL_NO_DISPLAY) {
        snprintf(err, errlen, "no EGL surfaceless display (EGL error 0x%x)",
                 (unsigned)eglGetError());
        return -1;
    }
    if (make_context(e, err, errlen) != 0) {
        drop(e);
        return -1;
    }
    snprintf(e->what, sizeof e->what, "EGL surfaceless");
done:;
    const char *gl = (const char *)glGetString(GL_RENDERER);
    size_t used = strlen(e->what);
    snprintf(e->what + used, sizeof e->what - used, ", %s", gl ? gl : "unknown renderer");
    return 0;
}

void kn_regl_close(struct kn_regl *e)
{
    drop(e);
}
