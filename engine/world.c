/* The ODE world: terrain geoms, Kenaf robots (base + four flipper bodies on
 * hinges), the near callback that turns track contacts into Contact
 * Surface Motion rows, the per-step servo/belt/battery updates and the
 * sensor read-out in the KRP/1 frame. */
#include "world.h"

#include <math.h>
#include <ode/ode.h>
#include <stdlib.h>
#include <string.h>

/* The whole contact model assumes double precision (ODE built with dDOUBLE). */
#ifndef dDOUBLE
#error "kenaf-engine needs ODE built in double precision (dDOUBLE)"
#endif
_Static_assert(sizeof(dReal) == sizeof(double), "ODE must be double precision");

#define MAX_CONTACTS 64 /* per geom pair, upper bound of contacts_per_pair */
/* per robot: 2 tracks and their inner contact spheres, chassis, 4 x (capsule
 * + 2 wedges + inner spheres) */
#define NGEOMS (15 + 6 * (KN_BELT_POINTS_MAX - 2))

struct robot;

/* Attached to every geom with dGeomSetData. */
struct ginfo {
    struct robot *robot; /* NULL: terrain */
    int part;            /* enum kn_world_part */
    int side;            /* KN_LEFT / KN_RIGHT */
    int track;           /* carries a belt */
    int tag;             /* terrain: KN_TAG_* */
};

struct robot {
    int id;
    dSpaceID space; /* its own geoms: a robot's parts never collide with each other */
    struct kn_robot_params rp;
    struct kn_pose spawn;
    double spawn_flip[KN_NFLIPPERS];
    dBodyID base, flip[KN_NFLIPPERS];
    dJointID hinge[KN_NFLIPPERS];
    dJointFeedback fb[KN_NFLIPPERS];
    dGeomID geom[NGEOMS];
    struct ginfo gi[NGEOMS];
    int ngeom;
    double pivot[KN_NFLIPPERS][3]; /* body-centre frame */
    double flip_com_dist;          /* pivot to flipper CoM [m] */
    /* commands and actuator state */
    double belt_cmd[2], belt_speed[2], belt_pos[2];
    int braking; /* emergency stop: belts brake at belt_decel_emergency */
    double flip_target[KN_NFLIPPERS];
    int servo_on;
    double torque[KN_NFLIPPERS];
    /* accelerometer */
    double prev_vel[3];
    int have_prev;
    double accel_w[3];
    /* battery */
    double used_ah, current_a, volt;
    /* contacts of the last step */
    int contacts;
    double max_depth, zmin, zmax;
    unsigned part_tags[KN_NPARTS];
    double part_zmax[KN_NPARTS];
    /* ICR mode: the commanded twist (body origin velocity along body x,
     * yaw rate about body z) and the frame it refers to, this step */
    int icr_turn;
    double icr_v, icr_om, icr_o[3], icr_ex[3], icr_ez[3];
};

struct kn_world {
    struct kn_physics_params pp;
    dWorldID world;
    dSpaceID space;
    dJointGroupID cgroup;
    struct kn_terrain terrain;
    int have_terrain;
    dGeomID tgeom[KN_TERRAIN_MAX_PARTS];
    struct ginfo tinfo[KN_TERRAIN_MAX_PARTS];
    int ntgeom;
    dHeightfieldDataID hfdata;
    double *hfbuf; /* heights in ODE's layout, kept alive for the geom */
    /* indexed by id; NULL: a free id. Grown by doubling as robots spawn,
     * each robot allocated apart so the geoms' ginfo pointers stay put. */
    struct robot **robots;
    int nrobots; /* length of robots[] (ids handed out so far) */
    double time;
    long steps;
    unsigned long rng; /* this world's ODE RNG state */
};

static int g_ode_users;

static void ode_acquire(void)
{
    if (g_ode_users++ == 0) {
        dInitODE2(0);
        dAllocateODEDataForThread(dAllocateMaskAll);
    }
}

static void ode_release(void)
{
    if (--g_ode_users == 0)
        dCloseODE();
}

/* ---------- small vector helpers ---------- */

static void cross(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static double dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ODE matrices are 3x4 row-major; body -> world. */
static void rot_apply(const dReal *R, const double v[3], double o[3])
{
    for (int i = 0; i < 3; i++)
        o[i] = R[4 * i] * v[0] + R[4 * i + 1] * v[1] + R[4 * i + 2] * v[2];
}

static void rot_apply_t(const dReal *R, const double v[3], double o[3])
{
    for (int i = 0; i < 3; i++)
        o[i] = R[i] * v[0] + R[4 + i] * v[1] + R[8 + i] * v[2];
}

static void rpy_matrix(double roll, double pitch, double yaw, dMatrix3 R)
{
    double cr = cos(roll), sr = sin(roll), cp = cos(pitch), sp = sin(pitch), cy = cos(yaw),
           sy = sin(yaw);
    /* R = Rz(yaw) Ry(pitch) Rx(roll) */
    double m[3][3] = {
        { cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr },
        { sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr },
        { -sp, cp * sr, cp * cr },
    };
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            R[4 * i + j] = m[i][j];
        R[4 * i + 3] = 0;
    }
}

/* ---------- terrain ---------- */

static void terrain_clear(struct kn_world *w)
{
    for (int i = 0; i < w->ntgeom; i++)
        dGeomDestroy(w->tgeom[i]);
    w->ntgeom = 0;
    if (w->hfdata) {
        dGeomHeightfieldDataDestroy(w->hfdata);
        w->hfdata = NULL;
    }
    free(w->hfbuf);
    w->hfbuf = NULL;
}

static const unsigned long TERRAIN_CAT = 1ul;

static int terrain_build(struct kn_world *w)
{
    const struct kn_terrain *t = &w->terrain;
    double cy = cos(t->pose[2]), sy = sin(t->pose[2]);
    for (int i = 0; i < t->nparts; i++) {
        const struct kn_part *p = &t->parts[i];
        dGeomID g = NULL;
        /* terrain pose: rotate by yaw about z, then translate */
        double c[3] = { cy * p->c[0] - sy * p->c[1] + t->pose[0],
                        sy * p->c[0] + cy * p->c[1] + t->pose[1], p->c[2] };
        if (p->kind == KN_PART_PLANE) {
            double n[3] = { cy * p->n[0] - sy * p->n[1], sy * p->n[0] + cy * p->n[1], p->n[2] };
            g = dCreatePlane(w->space, n[0], n[1], n[2], dot(n, c));
        } else if (p->kind == KN_PART_BOX) {
            g = dCreateBox(w->space, 2 * p->half[0], 2 * p->half[1], 2 * p->half[2]);
            dGeomSetPosition(g, c[0], c[1], c[2]);
            dMatrix3 R = { 0 };
            rpy_matrix(0, p->pitch, p->yaw + t->pose[2], R);
            dGeomSetRotation(g, R);
        } else {
            /* ODE heightfields are y-up with samples along local x and z:
             * turn local y to world z, so local z = world -y. */
            int nx = t->hf_nx, ny = t->hf_ny;
            w->hfbuf = malloc((size_t)nx * (size_t)ny * sizeof *w->hfbuf);
            if (!w->hfbuf)
                return -1;
            for (int j = 0; j < ny; j++)
                for (int k = 0; k < nx; k++)
                    w->hfbuf[(size_t)j * nx + k] = t->hf[(size_t)(ny - 1 - j) * nx + k];
            w->hfdata = dGeomHeightfieldDataCreate();
            dGeomHeightfieldDataBuildDouble(w->hfdata, w->hfbuf, 0, (nx - 1) * t->hf_cell,
                                            (ny - 1) * t->hf_cell, nx, ny, t->hf_scale, 0, 0.5, 0);
            /* real height bounds let the AABB test skip geoms above the field */
            double hmin = INFINITY, hmax = -INFINITY;
            for (size_t q = 0; q < (size_t)nx * (size_t)ny; q++) {
                /* the loops above wrote every one of the nx * ny cells */
                /* NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage) */
                hmin = fmin(hmin, w->hfbuf[q]);
                hmax = fmax(hmax, w->hfbuf[q]);
            }
            dGeomHeightfieldDataSetBounds(w->hfdata, hmin * t->hf_scale, hmax * t->hf_scale);
            g = dCreateHeightfield(w->space, w->hfdata, 1);
            dGeomSetPosition(g, c[0], c[1], c[2]);
            dMatrix3 Rz, Rx, R;
            dRFromAxisAndAngle(Rx, 1, 0, 0, M_PI / 2);
            dRFromAxisAndAngle(Rz, 0, 0, 1, t->pose[2]);
            dMultiply0_333(R, Rz, Rx);
            dGeomSetRotation(g, R);
        }
        dGeomSetCategoryBits(g, TERRAIN_CAT);
        dGeomSetCollideBits(g, ~TERRAIN_CAT);
        w->tinfo[i] = (struct ginfo){ .robot = NULL, .tag = p->tag };
        dGeomSetData(g, &w->tinfo[i]);
        w->tgeom[w->ntgeom++] = g;
    }
    return 0;
}

int kn_world_set_terrain(struct kn_world *w, const struct kn_terrain *t)
{
    terrain_clear(w);
    if (w->have_terrain)
        kn_terrain_free(&w->terrain);
    w->have_terrain = 0;
    if (kn_terrain_copy(&w->terrain, t))
        return -1;
    w->have_terrain = 1;
    if (terrain_build(w)) {
        terrain_clear(w);
        return -1;
    }
    return 0;
}

double kn_world_ground_z(struct kn_world *w, double x, double y)
{
    const double top = 100.0;
    dGeomID ray = dCreateRay(0, 2 * top);
    dGeomRaySet(ray, x, y, top, 0, 0, -1);
    double best = -INFINITY;
    for (int i = 0; i < w->ntgeom; i++) {
        dContactGeom cg[4];
        int n = dCollide(ray, w->tgeom[i], 4, cg, sizeof cg[0]);
        for (int k = 0; k < n; k++)
            if (cg[k].pos[2] > best)
                best = cg[k].pos[2];
    }
    dGeomDestroy(ray);
    return best;
}

/* ---------- robots ---------- */

double kn_world_track_separation(const struct kn_robot_params *rp)
{
    return 2 * rp->track_y;
}

double kn_world_chi(const struct kn_robot_params *rp, enum kn_fdir_mode mode)
{
    return mode == KN_FDIR_ICR ? rp->steer_chi_icr : rp->steer_chi;
}

static int flipper_front(int k)
{
    return k == KN_FL || k == KN_FR;
}

static int flipper_side(int k)
{
    return (k == KN_FL || k == KN_RL) ? KN_LEFT : KN_RIGHT;
}

static void add_geom(struct robot *r, dGeomID g, dBodyID b, int part, int side, int track,
                     const double off[3], const dMatrix3 Roff)
{
    dGeomSetBody(g, b);
    dGeomSetOffsetPosition(g, off[0], off[1], off[2]);
    if (Roff)
        dGeomSetOffsetRotation(g, Roff);
    r->gi[r->ngeom] = (struct ginfo){ .robot = r, .part = part, .side = side, .track = track };
    dGeomSetData(g, &r->gi[r->ngeom]);
    r->geom[r->ngeom++] = g;
}

static const unsigned long ROBOT_CAT = 2ul;

static void robot_bits(struct kn_world *w, struct robot *r)
{
    /* Own parts never meet: the robot's geoms sit in their own space, and
     * the world's space only collides that space against others. Flippers
     * switched off collide with nothing. */
    for (int i = 0; i < r->ngeom; i++) {
        int is_flip = r->gi[i].part >= KN_PART_FLIPPER_FL && r->gi[i].part < KN_PART_CHASSIS;
        unsigned long on = is_flip && !w->pp.flipper_collision ? 0 : 1;
        dGeomSetCategoryBits(r->geom[i], on ? ROBOT_CAT : 0);
        dGeomSetCollideBits(r->geom[i], on ? ~0ul : 0);
    }
}

static void robot_destroy_ode(struct robot *r)
{
    for (int i = 0; i < r->ngeom; i++)
        dGeomDestroy(r->geom[i]);
    r->ngeom = 0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        if (r->hinge[k])
            dJointDestroy(r->hinge[k]);
        if (r->flip[k])
            dBodyDestroy(r->flip[k]);
        r->hinge[k] = NULL;
        r->flip[k] = NULL;
    }
    if (r->base)
        dBodyDestroy(r->base);
    r->base = NULL;
    if (r->space)
        dSpaceDestroy(r->space);
    r->space = NULL;
}

/* Hinge angle with the KRP/1 sign (+ raises the tip); the hinge axes are
 * chosen so ODE's angle already has that sign. */
static double flipper_angle(const struct robot *r, int k)
{
    return dJointGetHingeAngle(r->hinge[k]);
}

static void robot_build(struct kn_world *w, struct robot *r)
{
    const struct kn_robot_params *rp = &r->rp;
    const struct kn_pose *ps = &r->spawn;
    dMatrix3 R = { 0 }, Rcap;
    rpy_matrix(ps->roll, ps->pitch, ps->yaw, R);
    /* capsules are along their local z: turn z onto body x */
    dRFromAxisAndAngle(Rcap, 0, 1, 0, M_PI / 2);
    const double o[3] = { ps->x, ps->y, ps->z };
    double v[3];

    /* base: body at its CoG, geoms offset from it */
    r->space = dSimpleSpaceCreate(w->space);
    r->base = dBodyCreate(w->world);
    dMass m;
    dMassSetBoxTotal(&m, rp->base_mass, rp->base_box[0], rp->base_box[1], rp->base_box[2]);
    dBodySetMass(r->base, &m);
    double cogb[3] = { rp->cog_x, 0, rp->cog_z }, cogw[3];
    rot_apply(R, cogb, cogw);
    dBodySetPosition(r->base, o[0] + cogw[0], o[1] + cogw[1], o[2] + cogw[2]);
    dBodySetRotation(r->base, R);
    r->ngeom = 0;
    for (int s = 0; s < 2; s++) {
        dGeomID g = dCreateCapsule(r->space, rp->track_radius, 2 * rp->track_pulley_x);
        double off[3] = { -rp->cog_x, s == KN_LEFT ? rp->track_y : -rp->track_y, -rp->cog_z };
        add_geom(r, g, r->base, KN_PART_TRACK_L + s, s, 1, off, Rcap);
        /* The capsule touches flat ground only at its two pulley ends, and
         * a rigid body on two contacts per belt has no unique friction
         * solution: it pivots about one pulley. Spheres of the pulley
         * radius on the axis between the pulleys are tangent to the belt's
         * bottom and top runs, inside the stadium, so they add ground
         * contacts along the belt without changing its outline. */
        for (int i = 1; i < w->pp.belt_points - 1; i++) {
            dGeomID sp = dCreateSphere(r->space, rp->track_radius);
            double f = (double)i / (w->pp.belt_points - 1);
            double soff[3] = { rp->track_pulley_x * (2 * f - 1) + off[0], off[1], off[2] };
            add_geom(r, sp, r->base, KN_PART_TRACK_L + s, s, 1, soff, NULL);
        }
    }
    {
        const double *cs = rp->chassis_size;
        dGeomID g = dCreateBox(r->space, cs[0], cs[1], cs[2]);
        double off[3] = { -rp->cog_x, 0,
                          -rp->track_radius + rp->chassis_clearance + 0.5 * cs[2] - rp->cog_z };
        add_geom(r, g, r->base, KN_PART_CHASSIS, KN_LEFT, 0, off, NULL);
    }

    /* flippers: built in line (angle 0), hinged, then swung to the start angle */
    const double L = rp->flipper_length, r1 = rp->flipper_root_radius, r2 = rp->flipper_tip_radius;
    const double reach = L + r2;
    r->flip_com_dist = 0.5 * reach;
    const double sa = (r1 - r2) / L, ca = sqrt(1 - sa * sa);
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        const double s = flipper_front(k) ? 1.0 : -1.0;
        const int side = flipper_side(k);
        const double y = side == KN_LEFT ? rp->flipper_y : -rp->flipper_y;
        r->pivot[k][0] = s * rp->track_pulley_x;
        r->pivot[k][1] = y;
        r->pivot[k][2] = 0;
        dBodyID b = dBodyCreate(w->world);
        r->flip[k] = b;
        dMass fm;
        double mf = rp->flipper_mass;
        /* a rod of length `reach` about its middle: m L^2/12 across, and
         * m L^2/3 about the pivot, as the robot model assumes (docs/engine.md) */
        double Iax = 0.5 * mf * r2 * r2, Icr = mf * reach * reach / 12.0;
        dMassSetParameters(&fm, mf, 0, 0, 0, Iax, Icr, Icr, 0, 0, 0);
        dBodySetMass(b, &fm);
        double comb[3] = { r->pivot[k][0] + s * r->flip_com_dist, y, 0 };
        rot_apply(R, comb, v);
        dBodySetPosition(b, o[0] + v[0], o[1] + v[1], o[2] + v[2]);
        dBodySetRotation(b, R);
        const int part = KN_PART_FLIPPER_FL + k;
        /* tip-radius capsule from the root axis to the tip axis */
        dGeomID g = dCreateCapsule(r->space, r2, L);
        double off[3] = { s * (0.5 * L - r->flip_com_dist), 0, 0 };
        add_geom(r, g, b, part, side, 1, off, Rcap);
        /* two wedges fill the taper between the root and tip circles: each
         * box has one face on an outer tangent line, thickness r2 inward */
        for (int up = 0; up < 2; up++) {
            double nu = sa, nw = up ? ca : -ca; /* outward normal (u along flipper, w up) */
            double t1u = r1 * nu, t1w = r1 * nw, t2u = L + r2 * nu, t2w = r2 * nw;
            double du = t2u - t1u, dw = t2w - t1w, len = sqrt(du * du + dw * dw);
            double cu = 0.5 * (t1u + t2u) - 0.5 * r2 * nu, cw = 0.5 * (t1w + t2w) - 0.5 * r2 * nw;
            dGeomID bx = dCreateBox(r->space, len, rp->flipper_width, r2);
            double boff[3] = { s * (cu - r->flip_com_dist), 0, cw };
            double beta = atan2(dw, du);
            dMatrix3 Rb;
            dRFromAxisAndAngle(Rb, 0, 1, 0, atan2(-sin(beta), s * cos(beta)));
            add_geom(r, bx, b, part, side, 1, boff, Rb);
        }
        /* contacts along the flipper as along the main track: a sphere on
         * the axis whose radius is the hull's half-thickness there (it
         * falls linearly from r1 to r2) touches both tangent runs */
        for (int i = 1; i < w->pp.flipper_points - 1; i++) {
            double u = L * i / (w->pp.flipper_points - 1);
            dGeomID sp = dCreateSphere(r->space, r1 + (r2 - r1) * u / L);
            double soff[3] = { s * (u - r->flip_com_dist), 0, 0 };
            add_geom(r, sp, b, part, side, 1, soff, NULL);
        }
        /* hinge: body1 = flipper, body2 = base; ODE's angle grows when body1
         * turns positively about the axis, so the axis is -y at the front and
         * +y at the rear for "+ raises the tip" */
        dJointID h = dJointCreateHinge(w->world, 0);
        dJointAttach(h, b, r->base);
        rot_apply(R, r->pivot[k], v);
        dJointSetHingeAnchor(h, o[0] + v[0], o[1] + v[1], o[2] + v[2]);
        double ax[3] = { 0, -s, 0 }, axw[3];
        rot_apply(R, ax, axw);
        dJointSetHingeAxis(h, axw[0], axw[1], axw[2]);
        dJointSetHingeParam(h, dParamLoStop, -rp->flipper_limit);
        dJointSetHingeParam(h, dParamHiStop, rp->flipper_limit);
        dJointSetHingeParam(h, dParamFMax, rp->servo_torque_max);
        dJointSetHingeParam(h, dParamVel, 0);
        dJointSetFeedback(h, &r->fb[k]);
        r->hinge[k] = h;
        /* swing to the start angle about the hinge axis through the pivot */
        double th = r->spawn_flip[k];
        if (th != 0) {
            dMatrix3 Rr, Rn;
            dRFromAxisAndAngle(Rr, axw[0], axw[1], axw[2], th);
            dMultiply0_333(Rn, Rr, R);
            dBodySetRotation(b, Rn);
            double piv[3] = { o[0] + v[0], o[1] + v[1], o[2] + v[2] };
            const dReal *bp = dBodyGetPosition(b);
            double rel[3] = { bp[0] - piv[0], bp[1] - piv[1], bp[2] - piv[2] }, nrel[3];
            rot_apply(Rr, rel, nrel);
            dBodySetPosition(b, piv[0] + nrel[0], piv[1] + nrel[1], piv[2] + nrel[2]);
        }
        r->flip_target[k] = th;
    }
    robot_bits(w, r);
    memset(r->belt_cmd, 0, sizeof r->belt_cmd);
    memset(r->belt_speed, 0, sizeof r->belt_speed);
    r->braking = 0;
    memset(r->belt_pos, 0, sizeof r->belt_pos);
    memset(r->torque, 0, sizeof r->torque);
    memset(r->accel_w, 0, sizeof r->accel_w);
    r->have_prev = 0;
    r->servo_on = 1;
    r->used_ah = 0;
    r->current_a = rp->batt_idle_a;
    r->volt = rp->batt_full_v - rp->batt_r_ohm * r->current_a;
    r->contacts = 0;
    r->max_depth = 0;
    r->zmin = r->zmax = 0;
    memset(r->part_tags, 0, sizeof r->part_tags);
    r->icr_turn = 0;
}

static struct robot *get_robot(const struct kn_world *w, int id)
{
    if (id < 0 || id >= w->nrobots)
        return NULL;
    return w->robots[id];
}

int kn_world_robot_valid(const struct kn_world *w, int id)
{
    return get_robot(w, id) != NULL;
}

static int pose_ok(const struct kn_pose *p)
{
    return isfinite(p->x) && isfinite(p->y) && (isfinite(p->z) || isnan(p->z)) &&
           isfinite(p->roll) && isfinite(p->pitch) && isfinite(p->yaw) && fabs(p->x) < 1e5 &&
           fabs(p->y) < 1e5 && !(fabs(p->z) >= 1e5);
}

/* The z that puts a robot at pose with its tracks 5 mm above the ground. */
static double ground_z_for(struct kn_world *w, const struct kn_robot_params *rp,
                           const struct kn_pose *pose)
{
    double g = kn_world_ground_z(w, pose->x, pose->y);
    if (!isfinite(g))
        g = 0;
    /* lowest point of a tilted stadium: radius plus the pulley offset */
    double lift = rp->track_radius + rp->track_pulley_x * fabs(sin(pose->pitch)) +
                  rp->track_y * fabs(sin(pose->roll));
    return g + lift + 0.005;
}

int kn_world_spawn(struct kn_world *w, const struct kn_robot_params *rp, const struct kn_pose *pose,
                   const double flippers[KN_NFLIPPERS])
{
    if (!pose_ok(pose))
        return -1;
    int id = -1;
    for (int i = 0; i < w->nrobots && id < 0; i++)
        if (!w->robots[i])
            id = i;
    if (id < 0) {
        int cap = w->nrobots ? 2 * w->nrobots : 4;
        struct robot **grown = realloc(w->robots, (size_t)cap * sizeof(struct robot *));
        if (!grown)
            return -1;
        for (int i = w->nrobots; i < cap; i++)
            grown[i] = NULL;
        w->robots = grown;
        id = w->nrobots;
        w->nrobots = cap;
    }
    struct robot *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->rp = *rp;
    r->spawn = *pose;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        double th = flippers ? flippers[k] : 0;
        if (!isfinite(th)) {
            free(r);
            return -1;
        }
        r->spawn_flip[k] = clampd(th, -rp->flipper_limit, rp->flipper_limit);
    }
    if (isnan(pose->z))
        r->spawn.z = ground_z_for(w, rp, pose);
    r->id = id;
    w->robots[id] = r;
    robot_build(w, r);
    return id;
}

int kn_world_place(struct kn_world *w, int id, const struct kn_pose *pose,
                   const double flippers[KN_NFLIPPERS])
{
    struct robot *r = get_robot(w, id);
    if (!r || !pose_ok(pose))
        return -1;
    double flip[KN_NFLIPPERS];
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        flip[k] = flippers ? flippers[k] : 0;
        if (!isfinite(flip[k]))
            return -1;
        flip[k] = clampd(flip[k], -r->rp.flipper_limit, r->rp.flipper_limit);
    }
    /* robot_build builds at the spawn pose and zeroes the counters: give
     * it the new pose, then put back what a placement keeps */
    struct kn_pose keep = r->spawn;
    double keep_flip[KN_NFLIPPERS], belt_pos[2] = { r->belt_pos[0], r->belt_pos[1] };
    double used_ah = r->used_ah;
    memcpy(keep_flip, r->spawn_flip, sizeof keep_flip);
    r->spawn = *pose;
    if (isnan(pose->z))
        r->spawn.z = ground_z_for(w, &r->rp, pose);
    memcpy(r->spawn_flip, flip, sizeof flip);
    robot_destroy_ode(r);
    robot_build(w, r);
    r->spawn = keep;
    memcpy(r->spawn_flip, keep_flip, sizeof keep_flip);
    r->belt_pos[0] = belt_pos[0];
    r->belt_pos[1] = belt_pos[1];
    r->used_ah = used_ah;
    return 0;
}

int kn_world_remove(struct kn_world *w, int id)
{
    struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    robot_destroy_ode(r);
    w->robots[id] = NULL;
    free(r);
    return 0;
}

int kn_world_set_belts(struct kn_world *w, int id, double left, double right)
{
    struct robot *r = get_robot(w, id);
    if (!r || !isfinite(left) || !isfinite(right))
        return -1;
    double vm = r->rp.belt_speed_max;
    r->belt_cmd[KN_LEFT] = clampd(left, -vm, vm);
    r->belt_cmd[KN_RIGHT] = clampd(right, -vm, vm);
    /* a stop repeated during an emergency stop keeps braking; only a
     * command to move again hands the belts back to the normal ramp */
    if (r->belt_cmd[KN_LEFT] != 0 || r->belt_cmd[KN_RIGHT] != 0)
        r->braking = 0;
    return 0;
}

int kn_world_brake(struct kn_world *w, int id)
{
    struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    r->belt_cmd[KN_LEFT] = r->belt_cmd[KN_RIGHT] = 0;
    r->braking = 1;
    return 0;
}

int kn_world_set_twist(struct kn_world *w, int id, double v, double omega)
{
    struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    double half =
        omega * kn_world_track_separation(&r->rp) / (2 * kn_world_chi(&r->rp, w->pp.fdir_mode));
    return kn_world_set_belts(w, id, v - half, v + half);
}

int kn_world_set_flippers(struct kn_world *w, int id, const double target[KN_NFLIPPERS],
                          unsigned mask)
{
    struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if ((mask & (1u << k)) && !isfinite(target[k]))
            return -1;
    for (int k = 0; k < KN_NFLIPPERS; k++)
        if (mask & (1u << k))
            r->flip_target[k] = clampd(target[k], -r->rp.flipper_limit, r->rp.flipper_limit);
    return 0;
}

int kn_world_command(struct kn_world *w, int id, const struct kn_command *c)
{
    if (kn_world_set_belts(w, id, c->belt_speed_m_s[KN_LEFT], c->belt_speed_m_s[KN_RIGHT]))
        return -1;
    return kn_world_set_flippers(w, id, c->flipper_rad, c->flipper_mask);
}

int kn_world_set_servo_enabled(struct kn_world *w, int id, int on)
{
    struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    r->servo_on = on != 0;
    return 0;
}

/* ---------- contacts ---------- */

static void robot_icr(struct robot *r)
{
    /* ICR mode: the belt speeds give the body twist of the skid-steer model
     * with steering efficiency chi (Martinez et al.'s symmetric ICRs):
     * v = (vL + vR)/2 along body x, omega = chi (vR - vL)/B about body z */
    double vl = r->belt_speed[KN_LEFT], vr = r->belt_speed[KN_RIGHT];
    r->icr_v = 0.5 * (vl + vr);
    r->icr_om = r->rp.steer_chi_icr * (vr - vl) / kn_world_track_separation(&r->rp);
    r->icr_turn = r->icr_om != 0;
    if (!r->icr_turn)
        return;
    const dReal *p = dBodyGetPosition(r->base), *Rm = dBodyGetRotation(r->base);
    double xb[3] = { 1, 0, 0 }, zb[3] = { 0, 0, 1 }, ob[3] = { -r->rp.cog_x, 0, -r->rp.cog_z },
           ow[3];
    rot_apply(Rm, xb, r->icr_ex);
    rot_apply(Rm, zb, r->icr_ez);
    rot_apply(Rm, ob, ow);
    for (int i = 0; i < 3; i++)
        r->icr_o[i] = p[i] + ow[i];
}

/* ICR mode, turning: the friction direction and surface speed of a contact
 * are those of the commanded twist at the contact point (tangent to the
 * circle about the ICR, speed omega times the distance to it), projected
 * on the contact plane. Every contact then asks for the same rigid motion,
 * so the robot turns at the commanded rate, and the rate grows with
 * |vR - vL| at any mean speed. Returns 0 where the twist has no component
 * in the contact plane (a step face ahead): the axle direction applies. */
static int icr_surface(const struct robot *r, const double pos[3], const double n[3], double t1[3],
                       double *s)
{
    if (dot(n, r->icr_ez) < 0.5) /* only contacts below the belts (within 60 deg) */
        return 0;
    double rel[3] = { pos[0] - r->icr_o[0], pos[1] - r->icr_o[1], pos[2] - r->icr_o[2] }, wr[3];
    cross(r->icr_ez, rel, wr);
    double u[3];
    for (int i = 0; i < 3; i++)
        u[i] = r->icr_v * r->icr_ex[i] + r->icr_om * wr[i];
    double un = dot(u, n);
    for (int i = 0; i < 3; i++)
        u[i] -= un * n[i];
    double ul = sqrt(dot(u, u));
    if (ul < 1e-9)
        return 0;
    for (int i = 0; i < 3; i++)
        t1[i] = u[i] / ul;
    *s = ul;
    return 1;
}

static void track_surface(const struct kn_world *w, const struct robot *r, int side, dContact *c)
{
    const dReal *Rm = dBodyGetRotation(r->base);
    double yb[3] = { 0, 1, 0 }, axle[3],
           n[3] = { c->geom.normal[0], c->geom.normal[1], c->geom.normal[2] };
    rot_apply(Rm, yb, axle);
    double b[3];
    cross(axle, n, b);
    double bl = sqrt(dot(b, b));
    if (bl < 1e-5) {
        /* normal along the axle (belt side face): plain friction */
        c->surface.mode = dContactApprox1;
        c->surface.mu = r->rp.body_mu;
        return;
    }
    for (int i = 0; i < 3; i++)
        b[i] /= bl;
    double t1[3] = { b[0], b[1], b[2] }, s = r->belt_speed[side];
    if (w->pp.fdir_mode == KN_FDIR_ICR && r->icr_turn) {
        double pos[3] = { c->geom.pos[0], c->geom.pos[1], c->geom.pos[2] }, ti[3], si;
        if (icr_surface(r, pos, n, ti, &si)) {
            memcpy(t1, ti, sizeof t1);
            s = si;
        }
    }
    c->surface.mode = dContactApprox1 | dContactFDir1 | dContactMotion1 | dContactMu2;
    c->surface.mu = r->rp.track_mu;
    c->surface.mu2 = r->rp.track_mu2;
    c->fdir1[0] = t1[0];
    c->fdir1[1] = t1[1];
    c->fdir1[2] = t1[2];
    c->surface.motion1 = s;
}

static void note_contact(struct robot *r, int part, int tag, const dContactGeom *g)
{
    if (r->contacts == 0 || g->pos[2] < r->zmin)
        r->zmin = g->pos[2];
    if (r->contacts == 0 || g->pos[2] > r->zmax)
        r->zmax = g->pos[2];
    r->contacts++;
    if (g->depth > r->max_depth)
        r->max_depth = g->depth;
    if (!r->part_tags[part] || g->pos[2] > r->part_zmax[part])
        r->part_zmax[part] = g->pos[2];
    r->part_tags[part] |= (unsigned)tag;
}

static void near_cb(void *data, dGeomID a, dGeomID b)
{
    struct kn_world *w = data;
    if (dGeomIsSpace(a) || dGeomIsSpace(b)) { /* a robot's space: into its geoms */
        dSpaceCollide2(a, b, data, near_cb);
        return;
    }
    struct ginfo *ia = dGeomGetData(a), *ib = dGeomGetData(b);
    if (!ia->robot) {
        dGeomID tg = a;
        a = b;
        b = tg;
        struct ginfo *ti = ia;
        ia = ib;
        ib = ti;
    }
    if (!ia->robot || ia->robot == ib->robot)
        return;
    dContactGeom cg[MAX_CONTACTS];
    int n = dCollide(a, b, w->pp.contacts_per_pair, cg, sizeof cg[0]);
    if (n <= 0)
        return;
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    struct robot *ra = ia->robot, *rb = ib->robot;
    for (int i = 0; i < n; i++) {
        dContact c;
        memset(&c, 0, sizeof c);
        c.geom = cg[i];
        /* dCollide(a, b): the normal points from b into a */
        if (!rb && ia->track) {
            track_surface(w, ra, ia->side, &c);
        } else {
            c.surface.mode = dContactApprox1;
            c.surface.mu = ra->rp.body_mu;
        }
        dJointID j = dJointCreateContact(w->world, w->cgroup, &c);
        dJointAttach(j, ba, bb);
        note_contact(ra, ia->part, rb ? KN_TAG_OBSTACLE : ib->tag, &cg[i]);
        if (rb)
            note_contact(rb, ib->part, KN_TAG_OBSTACLE, &cg[i]);
    }
}

/* ---------- stepping ---------- */

static void robot_pre_step(struct kn_world *w, struct robot *r)
{
    const double h = w->pp.step_s;
    for (int s = 0; s < 2; s++) {
        double a = r->braking ? r->rp.belt_decel_emergency : r->rp.belt_accel_max;
        double dv = r->belt_cmd[s] - r->belt_speed[s], amax = a * h;
        r->belt_speed[s] += clampd(dv, -amax, amax);
    }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        double th = flipper_angle(r, k);
        double vel = clampd(r->rp.servo_kp * (r->flip_target[k] - th), -r->rp.servo_rate_max,
                            r->rp.servo_rate_max);
        dJointSetHingeParam(r->hinge[k], dParamVel, vel);
        dJointSetHingeParam(r->hinge[k], dParamFMax, r->servo_on ? r->rp.servo_torque_max : 0);
    }
    if (w->pp.fdir_mode == KN_FDIR_ICR)
        robot_icr(r);
    r->contacts = 0;
    r->max_depth = 0;
    r->zmin = r->zmax = 0;
    memset(r->part_tags, 0, sizeof r->part_tags);
    memset(r->part_zmax, 0, sizeof r->part_zmax);
}

static void origin_velocity(const struct robot *r, double v[3])
{
    double ob[3] = { -r->rp.cog_x, 0, -r->rp.cog_z }, ow[3];
    const dReal *Rm = dBodyGetRotation(r->base);
    rot_apply(Rm, ob, ow);
    const dReal *p = dBodyGetPosition(r->base);
    dVector3 pv;
    dBodyGetPointVel(r->base, p[0] + ow[0], p[1] + ow[1], p[2] + ow[2], pv);
    v[0] = pv[0];
    v[1] = pv[1];
    v[2] = pv[2];
}

static void robot_post_step(struct kn_world *w, struct robot *r)
{
    const double h = w->pp.step_s;
    for (int s = 0; s < 2; s++)
        r->belt_pos[s] += r->belt_speed[s] * h;
    double tsum = 0;
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        /* joint torque on the flipper about its axis: the feedback torque
         * about the flipper CoM minus the moment of the hinge's reaction
         * force, which acts at the pivot */
        const dJointFeedback *fb = &r->fb[k];
        dVector3 anc, ax;
        dJointGetHingeAnchor(r->hinge[k], anc);
        dJointGetHingeAxis(r->hinge[k], ax);
        const dReal *cp = dBodyGetPosition(r->flip[k]);
        double arm[3] = { anc[0] - cp[0], anc[1] - cp[1], anc[2] - cp[2] },
               f[3] = { fb->f1[0], fb->f1[1], fb->f1[2] };
        double mf[3];
        cross(arm, f, mf);
        double t[3] = { fb->t1[0] - mf[0], fb->t1[1] - mf[1], fb->t1[2] - mf[2] };
        double axd[3] = { ax[0], ax[1], ax[2] };
        r->torque[k] = dot(t, axd);
        tsum += fabs(r->torque[k]);
    }
    double v[3];
    origin_velocity(r, v);
    if (r->have_prev)
        for (int i = 0; i < 3; i++)
            r->accel_w[i] = (v[i] - r->prev_vel[i]) / h;
    memcpy(r->prev_vel, v, sizeof v);
    r->have_prev = 1;
    const struct kn_robot_params *rp = &r->rp;
    r->current_a = rp->batt_idle_a +
                   rp->batt_belt_a_per_mps * (fabs(r->belt_speed[0]) + fabs(r->belt_speed[1])) +
                   rp->batt_flipper_a_per_nm * tsum;
    r->used_ah += r->current_a * h / 3600.0;
    double soc = 1 - r->used_ah / rp->batt_capacity_ah;
    if (soc < 0)
        soc = 0;
    double voc = rp->batt_empty_v + (rp->batt_full_v - rp->batt_empty_v) * soc;
    r->volt = voc - rp->batt_r_ohm * r->current_a;
    if (r->volt < 0)
        r->volt = 0;
}

void kn_world_step(struct kn_world *w, int n)
{
    const double h = w->pp.step_s;
    dRandSetSeed(w->rng);
    for (int it = 0; it < n; it++) {
        for (int i = 0; i < w->nrobots; i++)
            if (w->robots[i])
                robot_pre_step(w, w->robots[i]);
        dSpaceCollide(w->space, w, near_cb);
        dWorldQuickStep(w->world, h);
        dJointGroupEmpty(w->cgroup);
        for (int i = 0; i < w->nrobots; i++)
            if (w->robots[i])
                robot_post_step(w, w->robots[i]);
        w->steps++;
        w->time = w->steps * h;
    }
    w->rng = dRandGetSeed();
}

double kn_world_time(const struct kn_world *w)
{
    return w->time;
}

/* ---------- read-out ---------- */

static void rot_to_rpy(const dReal *R, double rpy[3])
{
    /* R = Rz(yaw) Ry(pitch) Rx(roll) */
    double r20 = clampd(R[8], -1, 1);
    rpy[1] = -asin(r20);
    rpy[0] = atan2(R[9], R[10]);
    rpy[2] = atan2(R[4], R[0]);
    if (rpy[2] <= -M_PI)
        rpy[2] += 2 * M_PI;
}

int kn_world_state(const struct kn_world *w, int id, struct kn_state *s)
{
    const struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    memset(s, 0, sizeof *s);
    const dReal *Rm = dBodyGetRotation(r->base), *p = dBodyGetPosition(r->base),
                *om = dBodyGetAngularVel(r->base);
    s->time_s = w->time;
    for (int i = 0; i < 2; i++) {
        s->belt_pos_m[i] = r->belt_pos[i];
        s->belt_speed_m_s[i] = r->belt_speed[i];
    }
    for (int k = 0; k < KN_NFLIPPERS; k++) {
        s->flipper_rad[k] = flipper_angle(r, k);
        s->flipper_torque_nm[k] = r->torque[k];
    }
    rot_to_rpy(Rm, s->rpy_rad);
    double omw[3] = { om[0], om[1], om[2] };
    rot_apply_t(Rm, omw, s->rate_rad_s);
    double aw[3] = { r->accel_w[0], r->accel_w[1], r->accel_w[2] + w->pp.gravity };
    rot_apply_t(Rm, aw, s->accel_m_s2);
    double ob[3] = { -r->rp.cog_x, 0, -r->rp.cog_z }, ow[3];
    rot_apply(Rm, ob, ow);
    for (int i = 0; i < 3; i++)
        s->pos_m[i] = p[i] + ow[i];
    s->battery_v = r->volt;
    s->have = KN_HAVE_TIME | KN_HAVE_BELT_POS | KN_HAVE_BELT_SPEED | KN_HAVE_FLIPPER |
              KN_HAVE_TORQUE | KN_HAVE_ATTITUDE | KN_HAVE_RATE | KN_HAVE_ACCEL | KN_HAVE_POSITION |
              KN_HAVE_BATTERY;
    return 0;
}

static void body_energy(dBodyID b, double g, double *ke, double *pe)
{
    dMass m;
    dBodyGetMass(b, &m);
    const dReal *v = dBodyGetLinearVel(b), *om = dBodyGetAngularVel(b), *R = dBodyGetRotation(b),
                *p = dBodyGetPosition(b);
    double wb[3], omw[3] = { om[0], om[1], om[2] };
    rot_apply_t(R, omw, wb);
    double Iw[3];
    for (int i = 0; i < 3; i++)
        Iw[i] = m.I[4 * i] * wb[0] + m.I[4 * i + 1] * wb[1] + m.I[4 * i + 2] * wb[2];
    *ke += 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * dot(wb, Iw);
    *pe += m.mass * g * p[2];
}

int kn_world_truth(const struct kn_world *w, int id, struct kn_truth *t)
{
    const struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    memset(t, 0, sizeof *t);
    const dReal *Rm = dBodyGetRotation(r->base), *p = dBodyGetPosition(r->base),
                *v = dBodyGetLinearVel(r->base), *om = dBodyGetAngularVel(r->base);
    double ob[3] = { -r->rp.cog_x, 0, -r->rp.cog_z }, ow[3];
    rot_apply(Rm, ob, ow);
    for (int i = 0; i < 3; i++) {
        t->origin[i] = p[i] + ow[i];
        t->cog[i] = p[i];
        t->vel[i] = v[i];
        t->omega[i] = om[i];
        for (int j = 0; j < 3; j++)
            t->rot[3 * i + j] = Rm[4 * i + j];
    }
    for (int k = 0; k < KN_NFLIPPERS; k++)
        t->flipper_rate[k] = dJointGetHingeAngleRate(r->hinge[k]);
    t->belt_cmd[0] = r->belt_cmd[0];
    t->belt_cmd[1] = r->belt_cmd[1];
    t->contacts = r->contacts;
    t->max_depth = r->max_depth;
    t->contact_zmin = r->zmin;
    t->contact_zmax = r->zmax;
    memcpy(t->part_tags, r->part_tags, sizeof t->part_tags);
    memcpy(t->part_zmax, r->part_zmax, sizeof t->part_zmax);
    body_energy(r->base, w->pp.gravity, &t->kinetic_j, &t->potential_j);
    for (int k = 0; k < KN_NFLIPPERS; k++)
        body_energy(r->flip[k], w->pp.gravity, &t->kinetic_j, &t->potential_j);
    return 0;
}

int kn_world_outline(const struct kn_world *w, int id, struct kn_outline *o)
{
    const struct robot *r = get_robot(w, id);
    if (!r)
        return -1;
    const dReal *Rm = dBodyGetRotation(r->base), *p = dBodyGetPosition(r->base);
    const struct kn_robot_params *rp = &r->rp;
    double pts[2][3] = { { rp->track_pulley_x - rp->cog_x, rp->track_y, -rp->cog_z },
                         { -rp->track_pulley_x - rp->cog_x, rp->track_y, -rp->cog_z } };
    double *dst[2] = { o->main_front, o->main_rear };
    for (int i = 0; i < 2; i++) {
        double wv[3];
        rot_apply(Rm, pts[i], wv);
        for (int j = 0; j < 3; j++)
            dst[i][j] = p[j] + wv[j];
    }
    int ks[2] = { KN_FL, KN_RL };
    double *tips[2] = { o->tip_front, o->tip_rear };
    for (int i = 0; i < 2; i++) {
        int k = ks[i];
        double s = flipper_front(k) ? 1 : -1;
        const dReal *fp = dBodyGetPosition(r->flip[k]), *fR = dBodyGetRotation(r->flip[k]);
        double tb[3] = { s * (rp->flipper_length - r->flip_com_dist), 0, 0 }, tw[3];
        rot_apply(fR, tb, tw);
        for (int j = 0; j < 3; j++)
            tips[i][j] = fp[j] + tw[j];
    }
    o->main_r = rp->track_radius;
    o->tip_r = rp->flipper_tip_radius;
    return 0;
}

/* ---------- lifecycle ---------- */

static int world_build(struct kn_world *w)
{
    const struct kn_physics_params *pp = &w->pp;
    /* QuickStep reorders constraints with ODE's global RNG: reseed per build */
    dRandSetSeed(pp->seed);
    w->world = dWorldCreate();
    /* a hash space: each robot's space is tested against the terrain and
     * only the robots whose boxes share a cell, not all pairs of geoms */
    w->space = dHashSpaceCreate(0);
    w->cgroup = dJointGroupCreate(0);
    dWorldSetGravity(w->world, 0, 0, -pp->gravity);
    dWorldSetERP(w->world, pp->erp);
    dWorldSetCFM(w->world, pp->cfm);
    dWorldSetQuickStepNumIterations(w->world, pp->iterations);
    dWorldSetQuickStepW(w->world, pp->sor);
    dWorldSetContactSurfaceLayer(w->world, pp->surface_layer);
    dWorldSetContactMaxCorrectingVel(w->world, pp->max_correcting_vel);
    dWorldSetAutoDisableFlag(w->world, 0);
    w->time = 0;
    w->steps = 0;
    if (w->have_terrain && terrain_build(w))
        return -1;
    for (int i = 0; i < w->nrobots; i++)
        if (w->robots[i])
            robot_build(w, w->robots[i]);
    w->rng = dRandGetSeed();
    return 0;
}

static void world_teardown(struct kn_world *w)
{
    for (int i = 0; i < w->nrobots; i++)
        if (w->robots[i])
            robot_destroy_ode(w->robots[i]);
    terrain_clear(w);
    if (w->cgroup)
        dJointGroupDestroy(w->cgroup);
    if (w->space)
        dSpaceDestroy(w->space);
    if (w->world)
        dWorldDestroy(w->world);
    w->cgroup = NULL;
    w->space = NULL;
    w->world = NULL;
}

struct kn_world *kn_world_create(const struct kn_physics_params *pp)
{
    struct kn_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->pp = *pp;
    if (w->pp.contacts_per_pair < 1)
        w->pp.contacts_per_pair = 1;
    if (w->pp.contacts_per_pair > MAX_CONTACTS)
        w->pp.contacts_per_pair = MAX_CONTACTS;
    /* 2 = the pulley ends only; a physics struct zeroed by hand gets that */
    w->pp.belt_points = (int)clampd(w->pp.belt_points, 2, KN_BELT_POINTS_MAX);
    w->pp.flipper_points = (int)clampd(w->pp.flipper_points, 2, KN_BELT_POINTS_MAX);
    ode_acquire();
    if (world_build(w)) {
        kn_world_destroy(w);
        return NULL;
    }
    return w;
}

void kn_world_destroy(struct kn_world *w)
{
    if (!w)
        return;
    world_teardown(w);
    for (int i = 0; i < w->nrobots; i++)
        free(w->robots[i]);
    free(w->robots);
    if (w->have_terrain)
        kn_terrain_free(&w->terrain);
    free(w);
    ode_release();
}

const struct kn_physics_params *kn_world_physics(const struct kn_world *w)
{
    return &w->pp;
}

int kn_world_reset(struct kn_world *w)
{
    world_teardown(w);
    return world_build(w);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
    return h;
}

static uint64_t hash_body(uint64_t h, dBodyID b)
{
    h = fnv(h, dBodyGetPosition(b), 3 * sizeof(dReal));
    h = fnv(h, dBodyGetQuaternion(b), 4 * sizeof(dReal));
    h = fnv(h, dBodyGetLinearVel(b), 3 * sizeof(dReal));
    h = fnv(h, dBodyGetAngularVel(b), 3 * sizeof(dReal));
    return h;
}

uint64_t kn_world_hash(const struct kn_world *w)
{
    uint64_t h = 1469598103934665603ull;
    h = fnv(h, &w->steps, sizeof w->steps);
    for (int i = 0; i < w->nrobots; i++) {
        const struct robot *r = w->robots[i];
        if (!r)
            continue;
        h = hash_body(h, r->base);
        for (int k = 0; k < KN_NFLIPPERS; k++)
            h = hash_body(h, r->flip[k]);
        h = fnv(h, r->belt_pos, sizeof r->belt_pos);
        h = fnv(h, r->torque, sizeof r->torque);
        h = fnv(h, &r->volt, sizeof r->volt);
    }
    return h;
}
