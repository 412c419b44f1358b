/* Turning-centre measurement on flat ground (turning.h): circle fits of the
 * rear and front main-pulley paths of a steady turn. */
#include "turning.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrain.h"
#include "world.h"

int kn_circle_fit(const double *x, const double *y, int n, double *cx, double *cy, double *r,
                  double *rms)
{
    if (n < 3)
        return -1;
    double mx = 0, my = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    /* centred moments; the centre (a, b) solves the normal equations */
    double suu = 0, svv = 0, suv = 0, suuu = 0, svvv = 0, suvv = 0, suuv = 0;
    for (int i = 0; i < n; i++) {
        double u = x[i] - mx, v = y[i] - my;
        suu += u * u;
        svv += v * v;
        suv += u * v;
        suuu += u * u * u;
        svvv += v * v * v;
        suvv += u * v * v;
        suuv += u * u * v;
    }
    double det = suu * svv - suv * suv;
    if (!(fabs(det) > 1e-12 * (suu + svv) * (suu + svv)) || suu + svv <= 0)
        return -1;
    double r1 = 0.5 * (suuu + suvv), r2 = 0.5 * (svvv + suuv);
    double uc = (r1 * svv - r2 * suv) / det, vc = (r2 * suu - r1 * suv) / det;
    *r = sqrt(uc * uc + vc * vc + (suu + svv) / n);
    *cx = uc + mx;
    *cy = vc + my;
    double ss = 0;
    for (int i = 0; i < n; i++) {
        double e = hypot(x[i] - *cx, y[i] - *cy) - *r;
        ss += e * e;
    }
    *rms = sqrt(ss / n);
    return 0;
}

int kn_turn_measure(const struct kn_robot_params *rp, const struct kn_physics_params *pp, double vl,
                    double vr, double settle_s, double measure_s, struct kn_turn *out)
{
    memset(out, 0, sizeof *out);
    struct kn_terrain t;
    memset(&t, 0, sizeof t);
    t.type = KN_TERRAIN_FLAT;
    char err[128];
    if (kn_terrain_build(&t, err, sizeof err))
        return -1;
    struct kn_world *w = kn_world_create(pp);
    if (!w)
        return -1;
    int rc = -1;
    int n = (int)(measure_s * 100) + 1, ns = 0;
    double *buf = malloc(6 * (size_t)n * sizeof *buf);
    struct kn_pose p = { 0, 0, NAN, 0, 0, 0 };
    int id = buf && kn_world_set_terrain(w, &t) == 0 ? kn_world_spawn(w, rp, &p, NULL) : -1;
    if (id < 0)
        goto out;
    double *fx = buf, *fy = buf + n, *bx = buf + 2 * n, *by = buf + 3 * n, *ox = buf + 4 * n,
           *oy = buf + 5 * n;
    kn_world_step(w, 500); /* settle on the ground */
    kn_world_set_belts(w, id, vl, vr);
    kn_world_step(w, (int)lround(settle_s * 1000));
    struct kn_truth tr;
    struct kn_outline o;
    double yaw0 = 0, yaw_prev = 0, yaw_acc = 0, dist = 0, px = 0, py = 0;
    double last_rot[9] = { 0 }, last_org[3] = { 0 };
    for (ns = 0; ns < n; ns++) {
        if (ns > 0)
            kn_world_step(w, 10);
        kn_world_truth(w, id, &tr);
        kn_world_outline(w, id, &o);
        fx[ns] = o.main_front[0];
        fy[ns] = o.main_front[1];
        bx[ns] = o.main_rear[0];
        by[ns] = o.main_rear[1];
        ox[ns] = tr.origin[0];
        oy[ns] = tr.origin[1];
        double yaw = atan2(tr.rot[3], tr.rot[0]);
        if (ns == 0) {
            yaw0 = yaw_prev = yaw;
        } else {
            double d = yaw - yaw_prev;
            d -= 2 * M_PI * floor((d + M_PI) / (2 * M_PI));
            yaw_acc += d;
            yaw_prev = yaw;
            /* forward speed: the displacement along the body x axis */
            dist += (tr.origin[0] - px) * tr.rot[0] + (tr.origin[1] - py) * tr.rot[3];
        }
        px = tr.origin[0];
        py = tr.origin[1];
        memcpy(last_rot, tr.rot, sizeof last_rot);
        memcpy(last_org, tr.origin, sizeof last_org);
    }
    (void)yaw0;
    double cf[2], cb[2], co[2], rf, rb, ro, ef, eb, eo;
    if (kn_circle_fit(fx, fy, n, &cf[0], &cf[1], &rf, &ef) ||
        kn_circle_fit(bx, by, n, &cb[0], &cb[1], &rb, &eb) ||
        kn_circle_fit(ox, oy, n, &co[0], &co[1], &ro, &eo))
        goto out;
    double c[2] = { 0.5 * (cf[0] + cb[0]), 0.5 * (cf[1] + cb[1]) };
    double d[2] = { c[0] - last_org[0], c[1] - last_org[1] };
    /* the body frame at the last sample, projected on the ground */
    out->centre_body[0] = d[0] * last_rot[0] + d[1] * last_rot[3];
    out->centre_body[1] = d[0] * last_rot[1] + d[1] * last_rot[4];
    out->centre_gap = hypot(cf[0] - cb[0], cf[1] - cb[1]);
    out->fit_rms = fmax(ef, eb);
    out->radius = ro;
    double T = (n - 1) * 0.01;
    out->yaw_rate = yaw_acc / T;
    out->speed = dist / T;
    double B = kn_world_track_separation(rp);
    out->radius_kin = fabs(vr - vl) > 1e-12 ? fabs(B * (vr + vl) / (2 * (vr - vl))) : INFINITY;
    out->chi_eff = fabs(vr - vl) > 1e-12 ? out->yaw_rate / ((vr - vl) / B) : NAN;
    rc = 0;
out:
    free(buf);
    kn_world_destroy(w);
    return rc;
}
