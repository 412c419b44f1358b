/* Triangle lists for the camera renderer: boxes, prisms, planes and grids
 * placed by a matrix, with the view's materials (a colour, and optionally
 * lines on a repeating cell as kenaf-view's textures draw them). One
 * vertex layout for everything, so a frame is one shader. */
#ifndef KN_RENDER_MESH_H
#define KN_RENDER_MESH_H

#include <stddef.h>

/* position 3, normal 3, fill colour 3, line colour 3, cell coordinates 2,
 * line width as a fraction of a cell 1 (0: no lines) */
#define KN_RMESH_FLOATS 15

/* A material: fill colour, line colour and width (kenaf-view's textures) */
struct kn_rmesh_mat {
    unsigned fill, line; /* 0xRRGGBB */
    float line_w;        /* fraction of a cell, 0 for a plain colour */
    float cell_m;        /* cell size in metres */
};

struct kn_rmesh {
    float *v; /* KN_RMESH_FLOATS per vertex, three vertices a triangle */
    size_t n, cap;
    int failed; /* an allocation failed: the mesh is incomplete */
};

void kn_rmesh_clear(struct kn_rmesh *m);
void kn_rmesh_free(struct kn_rmesh *m);
size_t kn_rmesh_vertices(const struct kn_rmesh *m);
/* a box of half sizes h centred on the origin of placement `at` */
void kn_rmesh_box(struct kn_rmesh *m, const float at[16], const float h[3],
                  const struct kn_rmesh_mat *mat);
/* a convex polygon (xz[2 * i], xz[2 * i + 1]: x and z) drawn out along y
 * from -w/2 to w/2: the side view of a track or flipper */
void kn_rmesh_prism(struct kn_rmesh *m, const float at[16], const float *xz, int n, double w,
                    const struct kn_rmesh_mat *mat);
/* the outline of a belt round two pulleys, radius r1 at x = 0 and r2 at
 * x = len, as a convex polygon; out holds 2 * KN_RMESH_BELT_MAX floats */
#define KN_RMESH_BELT_MAX 64
int kn_rmesh_belt(double r1, double r2, double len, float *out);
/* a square of side `size` in the placement's xy plane, normal +z */
void kn_rmesh_square(struct kn_rmesh *m, const float at[16], double size,
                     const struct kn_rmesh_mat *mat);
/* a height grid: z[j * nx + i] * scale at (x0 + i dx, y0 + j dy) */
void kn_rmesh_grid(struct kn_rmesh *m, const float at[16], int nx, int ny, double dx, double dy,
                   const double *z, double scale, const struct kn_rmesh_mat *mat);

#endif
