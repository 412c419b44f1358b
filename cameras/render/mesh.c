/* Triangle lists for the camera renderer (mesh.h): the few shapes the
 * scene is made of, transformed to the world on the CPU. A scene is a few
 * thousand triangles, so one vertex array per frame costs less than the
 * bookkeeping of a mesh per part would. */
#include "mesh.h"
#include "mat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kn_rmesh_clear(struct kn_rmesh *m)
{
    m->n = 0;
    m->failed = 0;
}

void kn_rmesh_free(struct kn_rmesh *m)
{
    free(m->v);
    memset(m, 0, sizeof *m);
}

size_t kn_rmesh_vertices(const struct kn_rmesh *m)
{
    return m->n;
}

static void colour(unsigned rgb, float *out)
{
    out[0] = (float)((rgb >> 16) & 0xff) / 255.0f;
    out[1] = (float)((rgb >> 8) & 0xff) / 255.0f;
    out[2] = (float)(rgb & 0xff) / 255.0f;
}

/* A triangle turned so that its normals' side sees it counter-clockwise:
 * the renderer culls back faces as kenaf-view does (three.js FrontSide),
 * so a camera inside a part (the bird's-eye camera is in its mast) sees
 * through it, and the shapes here need not care for their order. */
static void front_ccw(float *t)
{
    const int F = KN_RMESH_FLOATS;
    double e1[3], e2[3], dot = 0;
    for (int k = 0; k < 3; k++) {
        e1[k] = t[F + k] - t[k];
        e2[k] = t[2 * F + k] - t[k];
    }
    for (int k = 0; k < 3; k++) {
        double c = e1[(k + 1) % 3] * e2[(k + 2) % 3] - e1[(k + 2) % 3] * e2[(k + 1) % 3];
        dot += c * (t[3 + k] + t[F + 3 + k] + t[2 * F + 3 + k]);
    }
    for (int k = 0; dot < 0 && k < F; k++) { /* swap the last two vertices */
        float tmp = t[F + k];
        t[F + k] = t[2 * F + k];
        t[2 * F + k] = tmp;
    }
}

/* One vertex: p and n in the placement's frame, uv in metres. */
static void vert(struct kn_rmesh *m, const float at[16], const float p[3], const float n[3],
                 double u, double v, const struct kn_rmesh_mat *mat)
{
    if (m->failed)
        return;
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        float *nv = realloc(m->v, cap * KN_RMESH_FLOATS * sizeof *nv);
        if (!nv) {
            m->failed = 1;
            return;
        }
        m->v = nv;
        m->cap = cap;
    }
    float *o = m->v + m->n++ * KN_RMESH_FLOATS;
    kn_rmat_point(at, p, o);
    kn_rmat_dir(at, n, o + 3);
    colour(mat->fill, o + 6);
    colour(mat->line, o + 9);
    double cell = mat->cell_m > 0 ? mat->cell_m : 1.0;
    o[12] = (float)(u / cell);
    o[13] = (float)(v / cell);
    o[14] = mat->line_w;
    if (m->n % 3 == 0)
        front_ccw(m->v + (m->n - 3) * KN_RMESH_FLOATS);
}

void kn_rmesh_box(struct kn_rmesh *m, const float at[16], const float h[3],
                  const struct kn_rmesh_mat *mat)
{
    /* two corners of each face share a sign pattern: a quad (b, c) */
    static const int quad[6][2] = {
        { -1, -1 }, { 1, -1 }, { 1, 1 }, { -1, -1 }, { 1, 1 }, { -1, 1 }
    };
    for (int a = 0; a < 3; a++)
        for (int s = -1; s <= 1; s += 2) {
            int b = (a + 1) % 3, c = (a + 2) % 3;
            float n[3] = { 0, 0, 0 };
            n[a] = (float)s;
            for (int k = 0; k < 6; k++) {
                float p[3];
                p[a] = (float)s * h[a];
                p[b] = (float)quad[k][0] * h[b];
                p[c] = (float)quad[k][1] * h[c];
                vert(m, at, p, n, p[b], p[c], mat);
            }
        }
}

void kn_rmesh_prism(struct kn_rmesh *m, const float at[16], const float *xz, int n, double w,
                    const struct kn_rmesh_mat *mat)
{
    float hw = (float)(0.5 * w), cx = 0, cz = 0;
    for (int i = 0; i < n; i++) {
        cx += xz[2 * i] / (float)n;
        cz += xz[2 * i + 1] / (float)n;
    }
    for (int s = -1; s <= 1; s += 2) { /* the two side faces, a fan each */
        float nrm[3] = { 0, (float)s, 0 };
        for (int i = 1; i + 1 < n; i++) {
            const int k[3] = { 0, i, i + 1 };
            for (int j = 0; j < 3; j++) {
                float p[3] = { xz[2 * k[j]], (float)s * hw, xz[2 * k[j] + 1] };
                vert(m, at, p, nrm, p[0], p[2], mat);
            }
        }
    }
    double run = 0; /* the belt's length so far, for its cells */
    for (int i = 0; i < n; i++) {
        int j = (i + 1) % n;
        float x0 = xz[2 * i], z0 = xz[2 * i + 1], x1 = xz[2 * j], z1 = xz[2 * j + 1];
        double len = hypot(x1 - x0, z1 - z0);
        if (len <= 0)
            continue;
        float nrm[3] = { (float)((z1 - z0) / len), 0, (float)(-(x1 - x0) / len) };
        /* outward: away from the centre of the convex outline */
        if (nrm[0] * (0.5f * (x0 + x1) - cx) + nrm[2] * (0.5f * (z0 + z1) - cz) < 0) {
            nrm[0] = -nrm[0];
            nrm[2] = -nrm[2];
        }
        const float a[3] = { x0, -hw, z0 }, b[3] = { x1, -hw, z1 };
        const float c[3] = { x1, hw, z1 }, d[3] = { x0, hw, z0 };
        vert(m, at, a, nrm, run, -hw, mat);
        vert(m, at, b, nrm, run + len, -hw, mat);
        vert(m, at, c, nrm, run + len, hw, mat);
        vert(m, at, a, nrm, run, -hw, mat);
        vert(m, at, c, nrm, run + len, hw, mat);
        vert(m, at, d, nrm, run, hw, mat);
        run += len;
    }
}

static double cross(const float *o, const float *a, const float *b)
{
    return (double)(a[0] - o[0]) * (b[1] - o[1]) - (double)(a[1] - o[1]) * (b[0] - o[0]);
}

static int by_x(const void *pa, const void *pb)
{
    const float *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

int kn_rmesh_belt(double r1, double r2, double len, float *out)
{
    /* both pulleys sampled round, then their convex hull (Andrew's
     * monotone chain): the straight runs are the tangents between them */
    enum { K = KN_RMESH_BELT_MAX / 2 };
    float pts[2 * K][2], hull[2 * K + 1][2];
    for (int i = 0; i < K; i++) {
        double a = 2.0 * M_PI * i / K;
        pts[i][0] = (float)(r1 * cos(a));
        pts[i][1] = (float)(r1 * sin(a));
        pts[K + i][0] = (float)(len + r2 * cos(a));
        pts[K + i][1] = (float)(r2 * sin(a));
    }
    qsort(pts, 2 * K, sizeof pts[0], by_x);
    int h = 0;
    for (int i = 0; i < 2 * K; i++) {
        while (h >= 2 && cross(hull[h - 2], hull[h - 1], pts[i]) <= 0)
            h--;
        memcpy(hull[h++], pts[i], sizeof pts[i]);
    }
    for (int i = 2 * K - 2, lo = h + 1; i >= 0; i--) {
        while (h >= lo && cross(hull[h - 2], hull[h - 1], pts[i]) <= 0)
            h--;
        memcpy(hull[h++], pts[i], sizeof pts[i]);
    }
    h--; /* the last point is the first again */
    if (h > KN_RMESH_BELT_MAX)
        h = KN_RMESH_BELT_MAX;
    memcpy(out, hull, (size_t)h * sizeof hull[0]);
    return h;
}

void kn_rmesh_square(struct kn_rmesh *m, const float at[16], double size,
                     const struct kn_rmesh_mat *mat)
{
    const float s = (float)(0.5 * size), n[3] = { 0, 0, 1 };
    const float c[4][3] = { { -s, -s, 0 }, { s, -s, 0 }, { s, s, 0 }, { -s, s, 0 } };
    static const int k[6] = { 0, 1, 2, 0, 2, 3 };
    for (int i = 0; i < 6; i++)
        vert(m, at, c[k[i]], n, c[k[i]][0], c[k[i]][1], mat);
}

void kn_rmesh_grid(struct kn_rmesh *m, const float at[16], int nx, int ny, double dx, double dy,
                   const double *z, double scale, const struct kn_rmesh_mat *mat)
{
    double x0 = -0.5 * (nx - 1) * dx, y0 = -0.5 * (ny - 1) * dy;
#define KN_Z(i, j) (z[(j)*nx + (i)] * scale)
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i + 1 < nx; i++) {
            static const int corner[6][2] = { { 0, 0 }, { 1, 0 }, { 0, 1 },
                                              { 1, 0 }, { 1, 1 }, { 0, 1 } };
            for (int c = 0; c < 6; c++) {
                int a = i + corner[c][0], b = j + corner[c][1];
                /* the slope from the neighbours, one-sided at the border */
                int al = a > 0 ? a - 1 : a, ar = a + 1 < nx ? a + 1 : a;
                int bl = b > 0 ? b - 1 : b, br = b + 1 < ny ? b + 1 : b;
                double gx = (KN_Z(ar, b) - KN_Z(al, b)) / ((ar - al) * dx);
                double gy = (KN_Z(a, br) - KN_Z(a, bl)) / ((br - bl) * dy);
                double len = sqrt(gx * gx + gy * gy + 1.0);
                float n[3] = { (float)(-gx / len), (float)(-gy / len), (float)(1.0 / len) };
                float p[3] = { (float)(x0 + a * dx), (float)(y0 + b * dy), (float)KN_Z(a, b) };
                vert(m, at, p, n, p[0], p[1], mat);
            }
        }
#undef KN_Z
}
