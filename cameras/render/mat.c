/* 4x4 matrix arithmetic for the camera renderer (mat.h): the few
 * operations placing parts, robots and cameras need, in float because
 * that is what the GPU takes. */
#include "mat.h"

#include <math.h>
#include <string.h>

void kn_rmat_identity(float m[16])
{
    memset(m, 0, 16 * sizeof m[0]);
    m[0] = m[5] = m[10] = m[15] = 1.0f;
}

void kn_rmat_mul(float out[16], const float a[16], const float b[16])
{
    float r[16];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) {
            double s = 0.0;
            for (int i = 0; i < 4; i++)
                s += (double)a[i * 4 + k] * b[c * 4 + i];
            r[c * 4 + k] = (float)s;
        }
    memcpy(out, r, sizeof r);
}

void kn_rmat_translate(float m[16], double x, double y, double z)
{
    float t[16];
    kn_rmat_identity(t);
    t[12] = (float)x;
    t[13] = (float)y;
    t[14] = (float)z;
    kn_rmat_mul(m, m, t);
}

void kn_rmat_rotate(float m[16], int axis, double rad)
{
    float r[16];
    kn_rmat_identity(r);
    float c = (float)cos(rad), s = (float)sin(rad);
    /* the two axes the rotation turns, in right-handed order */
    int i = (axis + 1) % 3, j = (axis + 2) % 3;
    r[i * 4 + i] = c;
    r[i * 4 + j] = s;
    r[j * 4 + i] = -s;
    r[j * 4 + j] = c;
    kn_rmat_mul(m, m, r);
}

void kn_rmat_point(const float m[16], const float p[3], float out[3])
{
    float r[3];
    for (int k = 0; k < 3; k++)
        r[k] = m[k] * p[0] + m[4 + k] * p[1] + m[8 + k] * p[2] + m[12 + k];
    memcpy(out, r, sizeof r);
}

void kn_rmat_dir(const float m[16], const float d[3], float out[3])
{
    float r[3];
    for (int k = 0; k < 3; k++)
        r[k] = m[k] * d[0] + m[4 + k] * d[1] + m[8 + k] * d[2];
    memcpy(out, r, sizeof r);
}

void kn_rmat_rigid_inverse(float out[16], const float m[16])
{
    float r[16];
    kn_rmat_identity(r);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            r[c * 4 + k] = m[k * 4 + c];
    for (int k = 0; k < 3; k++)
        r[12 + k] = -(r[k] * m[12] + r[4 + k] * m[13] + r[8 + k] * m[14]);
    memcpy(out, r, sizeof r);
}

void kn_rmat_perspective(float m[16], double vfov, double aspect, double near, double far)
{
    double f = 1.0 / tan(0.5 * vfov);
    memset(m, 0, 16 * sizeof m[0]);
    m[0] = (float)(f / aspect);
    m[5] = (float)f;
    m[10] = (float)((far + near) / (near - far));
    m[11] = -1.0f;
    m[14] = (float)(2.0 * far * near / (near - far));
}
