/* The camera renderer (render.h): one shader with kenaf-view's look (its
 * background and fog, a hemisphere light, an ambient light and the sun of
 * tools/view/web/main.js on Lambert surfaces, the textures' lines drawn
 * from cell coordinates), the terrain uploaded once per world and the
 * robots each shot, into a framebuffer object read back with glReadPixels.
 * No multisampling: the same state gives the same pixels. */
#include "render.h"
#include "egl.h"
#include "mesh.h"

#include <GLES3/gl3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* main.js: background and fog 0xc4d0d8 from 25 to 70 m */
#define SKY_R (0xc4 / 255.0f)
#define SKY_G (0xd0 / 255.0f)
#define SKY_B (0xd8 / 255.0f)

static const char VERTEX[] = "#version 300 es\n"
                             "layout(location = 0) in vec3 a_pos;\n"
                             "layout(location = 1) in vec3 a_nor;\n"
                             "layout(location = 2) in vec3 a_fill;\n"
                             "layout(location = 3) in vec3 a_line;\n"
                             "layout(location = 4) in vec2 a_cell;\n"
                             "layout(location = 5) in float a_lw;\n"
                             "uniform mat4 u_view, u_proj;\n"
                             "out vec3 v_nor, v_fill, v_line;\n"
                             "out vec2 v_cell;\n"
                             "out float v_lw, v_depth;\n"
                             "void main() {\n"
                             "  vec4 e = u_view * vec4(a_pos, 1.0);\n"
                             "  v_depth = -e.z;\n"
                             "  v_nor = a_nor; v_fill = a_fill; v_line = a_line;\n"
                             "  v_cell = a_cell; v_lw = a_lw;\n"
                             "  gl_Position = u_proj * e;\n"
                             "}\n";

/* main.js's lights: HemisphereLight(0xf4f8ff, 0x9a9a90, 0.5) with up +z,
 * AmbientLight(0xffffff, 0.25), DirectionalLight(0xffffff, 0.35) from
 * (3, 2, 6); three.js's Fog blends by smoothstep of the eye depth */
static const char FRAGMENT[] = "#version 300 es\n"
                               "precision highp float;\n"
                               "in vec3 v_nor, v_fill, v_line;\n"
                               "in vec2 v_cell;\n"
                               "in float v_lw, v_depth;\n"
                               "uniform vec3 u_fog;\n"
                               "out vec4 o;\n"
                               "void main() {\n"
                               "  vec3 n = normalize(v_nor);\n"
                               "  vec2 w = max(fwidth(v_cell), vec2(1e-4));\n"
                               "  vec2 a = v_cell - 0.5 * w, b = v_cell + 0.5 * w;\n"
                               "  vec2 cov = (floor(b) * v_lw + min(fract(b), vec2(v_lw))\n"
                               "      - floor(a) * v_lw - min(fract(a), vec2(v_lw))) / w;\n"
                               "  float on = 1.0 - (1.0 - cov.x) * (1.0 - cov.y);\n"
                               "  vec3 base = mix(v_fill, v_line, clamp(on, 0.0, 1.0));\n"
                               "  vec3 sky = vec3(0.957, 0.973, 1.0);\n"
                               "  vec3 ground = vec3(0.604, 0.604, 0.565);\n"
                               "  vec3 hemi = mix(ground, sky, 0.5 * n.z + 0.5);\n"
                               "  float sun = max(dot(n, normalize(vec3(3.0, 2.0, 6.0))), 0.0);\n"
                               "  vec3 light = vec3(0.25) + 0.5 * hemi + vec3(0.35 * sun);\n"
                               "  vec3 c = min(base * light, vec3(1.0));\n"
                               "  float fog = smoothstep(25.0, 70.0, v_depth);\n"
                               "  o = vec4(mix(c, u_fog, fog), 1.0);\n"
                               "}\n";

struct kn_render {
    struct kn_regl egl;
    GLuint prog, vao, vbo[2], fbo, rb[2];
    GLint u_view, u_proj, u_fog;
    int fbw, fbh;
    const struct kn_rscene *scene; /* whose terrain is in vbo[0] */
    unsigned generation;
    GLsizei terrain_n;
    struct kn_rmesh robots;
    uint8_t *row; /* one row, to turn the picture upright */
};

static GLuint shader(GLenum type, const char *src, char *err, size_t errlen)
{
    GLuint s = glCreateShader(type);
    GLint ok = 0;
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[256] = "";
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        snprintf(err, errlen, "shader does not compile: %s", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

static int program(struct kn_render *r, char *err, size_t errlen)
{
    GLuint vs = shader(GL_VERTEX_SHADER, VERTEX, err, errlen);
    GLuint fs = vs ? shader(GL_FRAGMENT_SHADER, FRAGMENT, err, errlen) : 0;
    GLint ok = 0;
    if (!fs) {
        glDeleteShader(vs);
        return -1;
    }
    r->prog = glCreateProgram();
    glAttachShader(r->prog, vs);
    glAttachShader(r->prog, fs);
    glLinkProgram(r->prog);
    glDeleteShader(vs);
    glDeleteShader(fs);
    glGetProgramiv(r->prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        snprintf(err, errlen, "shader program does not link");
        return -1;
    }
    r->u_view = glGetUniformLocation(r->prog, "u_view");
    r->u_proj = glGetUniformLocation(r->prog, "u_proj");
    r->u_fog = glGetUniformLocation(r->prog, "u_fog");
    glGenVertexArrays(1, &r->vao);
    glGenBuffers(2, r->vbo);
    glGenFramebuffers(1, &r->fbo);
    glGenRenderbuffers(2, r->rb);
    return 0;
}

struct kn_render *kn_render_open(char *err, size_t errlen)
{
    struct kn_render *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (kn_regl_open(&r->egl, err, errlen) != 0) {
        free(r);
        return NULL;
    }
    if (program(r, err, errlen) != 0) {
        kn_render_close(r);
        return NULL;
    }
    return r;
}

void kn_render_close(struct kn_render *r)
{
    if (!r)
        return;
    /* the GL objects go with the context */
    kn_regl_close(&r->egl);
    kn_rmesh_free(&r->robots);
    free(r->row);
    free(r);
}

const char *kn_render_describe(const struct kn_render *r)
{
    return r->egl.what;
}

/* The framebuffer at the shot's size: colour RGBA8 and a 24-bit depth. */
static int framebuffer(struct kn_render *r, int w, int h, char *err, size_t errlen)
{
    if (r->fbw == w && r->fbh == h)
        return 0;
    uint8_t *row = realloc(r->row, (size_t)w * 4);
    if (!row) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    r->row = row;
    glBindFramebuffer(GL_FRAMEBUFFER, r->fbo);
    glBindRenderbuffer(GL_RENDERBUFFER, r->rb[0]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, r->rb[0]);
    glBindRenderbuffer(GL_RENDERBUFFER, r->rb[1]);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT24, w, h);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, r->rb[1]);
    if (glCheckFramebufferStatus(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE) {
        snprintf(err, errlen, "framebuffer %dx%d incomplete", w, h);
        r->fbw = r->fbh = 0;
        return -1;
    }
    r->fbw = w;
    r->fbh = h;
    return 0;
}

/* Draws the n vertices of buffer b with the one vertex layout. */
static void draw(GLuint b, GLsizei n)
{
    static const int size[6] = { 3, 3, 3, 3, 2, 1 };
    size_t at = 0;
    glBindBuffer(GL_ARRAY_BUFFER, b);
    for (GLuint i = 0; i < 6; i++) {
        glEnableVertexAttribArray(i);
        glVertexAttribPointer(i, size[i], GL_FLOAT, GL_FALSE, KN_RMESH_FLOATS * sizeof(float),
                              (const void *)(at * sizeof(float)));
        at += (size_t)size[i];
    }
    glDrawArrays(GL_TRIANGLES, 0, n);
}

static void upload(GLuint b, const struct kn_rmesh *m, GLenum usage)
{
    glBindBuffer(GL_ARRAY_BUFFER, b);
    glBufferData(GL_ARRAY_BUFFER,
                 (GLsizeiptr)(kn_rmesh_vertices(m) * KN_RMESH_FLOATS * sizeof(float)), m->v, usage);
}

int kn_render_shot(struct kn_render *r, const struct kn_rscene *s, const struct kn_rcam_shot *shot,
                   uint8_t *rgba, char *err, size_t errlen)
{
    float view[16], proj[16];
    int w = shot->width, h = shot->height;
    if (shot->robot < 0 || shot->robot >= KN_RSCENE_ROBOTS || !s->robots[shot->robot].present) {
        snprintf(err, errlen, "robot %d is not in the scene", shot->robot);
        return -1;
    }
    if (w > KN_RENDER_SIZE_MAX || h > KN_RENDER_SIZE_MAX ||
        kn_rcam_matrices(&s->geom, &s->robots[shot->robot], shot, view, proj) != 0) {
        snprintf(err, errlen, "bad shot: camera %d, %dx%d", (int)shot->cam, w, h);
        return -1;
    }
    if (framebuffer(r, w, h, err, errlen) != 0)
        return -1;
    if (r->scene != s || r->generation != s->generation) {
        upload(r->vbo[0], &s->terrain, GL_STATIC_DRAW);
        r->terrain_n = (GLsizei)kn_rmesh_vertices(&s->terrain);
        r->scene = s;
        r->generation = s->generation;
    }
    kn_rmesh_clear(&r->robots);
    kn_rrobot_mesh(s, &r->robots);
    if (r->robots.failed) {
        snprintf(err, errlen, "out of memory for the robots");
        return -1;
    }
    upload(r->vbo[1], &r->robots, GL_STREAM_DRAW);

    glBindFramebuffer(GL_FRAMEBUFFER, r->fbo);
    glViewport(0, 0, w, h);
    glEnable(GL_DEPTH_TEST);
    glEnable(GL_CULL_FACE);
    glCullFace(GL_BACK);
    glFrontFace(GL_CCW);
    glClearColor(SKY_R, SKY_G, SKY_B, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
    glUseProgram(r->prog);
    glUniformMatrix4fv(r->u_view, 1, GL_FALSE, view);
    glUniformMatrix4fv(r->u_proj, 1, GL_FALSE, proj);
    glUniform3f(r->u_fog, SKY_R, SKY_G, SKY_B);
    glBindVertexArray(r->vao);
    draw(r->vbo[0], r->terrain_n);
    draw(r->vbo[1], (GLsizei)kn_rmesh_vertices(&r->robots));
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, rgba);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        snprintf(err, errlen, "GL error 0x%x", (unsigned)e);
        return -1;
    }
    /* GL's first row is the bottom one */
    size_t stride = (size_t)w * 4;
    for (int y = 0; y < h / 2; y++) {
        uint8_t *a = rgba + (size_t)y * stride, *b = rgba + (size_t)(h - 1 - y) * stride;
        memcpy(r->row, a, stride);
        memcpy(a, b, stride);
        memcpy(b, r->row, stride);
    }
    return 0;
}
