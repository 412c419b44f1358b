/* 4x4 matrices for the camera renderer: rigid placements of parts and
 * cameras, and the perspective projection. Column-major like OpenGL, so
 * a matrix goes to glUniformMatrix4fv as it is. */
#ifndef KN_RENDER_MAT_H
#define KN_RENDER_MAT_H

void kn_rmat_identity(float m[16]);
/* out = a * b (b applies first); out may be a or b */
void kn_rmat_mul(float out[16], const float a[16], const float b[16]);
/* m = m * T(x, y, z) */
void kn_rmat_translate(float m[16], double x, double y, double z);
/* m = m * R(axis, rad), axis 0 x, 1 y, 2 z, right-handed */
void kn_rmat_rotate(float m[16], int axis, double rad);
/* a point (with the translation) and a direction (without it) */
void kn_rmat_point(const float m[16], const float p[3], float out[3]);
void kn_rmat_dir(const float m[16], const float d[3], float out[3]);
/* inverse of a rotation plus translation */
void kn_rmat_rigid_inverse(float out[16], const float m[16]);
/* OpenGL's perspective: vertical field of view in radians */
void kn_rmat_perspective(float m[16], double vfov, double aspect, double near, double far);

#endif
