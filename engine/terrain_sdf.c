/* Terrains as SDF worlds (terrain_sdf.h): what the engine builds from a
 * terrain file, written for Gazebo, so both simulators get the one
 * description. SDF poses are x y z roll pitch yaw with R = Rz Ry Rx, the
 * engine's own order for a box (pitch about y, then yaw about z). */
#include "terrain_sdf.h"

#include <math.h>
#include <string.h>

#include "terrain_apparatus.h"

/* Plane parts: SDF planes have a size; far beyond any lane. */
#define PLANE_SIZE_M 200.0

const char *kn_sdf_tag_name(int tag)
{
    switch (tag) {
    case KN_TAG_OBSTACLE: return "obstacle";
    case KN_TAG_PIT: return "pit";
    case KN_TAG_WALL: return "wall";
    default: return "ground";
    }
}

/* Colours a person tells apart: floor grey, wood, pale walls, dark pit. */
static void material(FILE *f, int tag)
{
    const char *rgb = tag == KN_TAG_OBSTACLE ? "0.72 0.55 0.36"
                      : tag == KN_TAG_WALL   ? "0.85 0.85 0.8"
                      : tag == KN_TAG_PIT    ? "0.25 0.25 0.25"
                                             : "0.6 0.6 0.6";
    fprintf(f,
            "          <material>\n"
            "            <ambient>%s 1</ambient>\n"
            "            <diffuse>%s 1</diffuse>\n"
            "          </material>\n",
            rgb, rgb);
}

/* No "-0" in a file a person reads. */
static double nz(double v)
{
    return v == 0 ? 0 : v;
}

static void geometry(FILE *f, const struct kn_part *p)
{
    if (p->kind == KN_PART_PLANE)
        fprintf(f,
                "          <geometry><plane><normal>%.9g %.9g %.9g</normal>"
                "<size>%g %g</size></plane></geometry>\n",
                nz(p->n[0]), nz(p->n[1]), nz(p->n[2]), PLANE_SIZE_M, PLANE_SIZE_M);
    else
        fprintf(f, "          <geometry><box><size>%.9g %.9g %.9g</size></box></geometry>\n",
                2 * p->half[0], 2 * p->half[1], 2 * p->half[2]);
}

static void part(FILE *f, const struct kn_part *p, int i)
{
    const char *tag = kn_sdf_tag_name(p->tag);
    double pitch = p->kind == KN_PART_BOX ? p->pitch : 0, yaw = p->kind == KN_PART_BOX ? p->yaw : 0;
    /* a collision and its visual are siblings, and SDF 1.8 on (gz-sim's
     * sdformat) refuses siblings of one name whatever their kind */
    for (int visual = 0; visual < 2; visual++) {
        const char *el = visual ? "visual" : "collision";
        fprintf(f, "        <%s name=\"%s_%d%s\">\n", el, tag, i, visual ? "_visual" : "");
        fprintf(f, "          <pose>%.9g %.9g %.9g 0 %.9g %.9g</pose>\n", nz(p->c[0]), nz(p->c[1]),
                nz(p->c[2]), nz(pitch), nz(yaw));
        geometry(f, p);
        if (visual)
            material(f, p->tag);
        fprintf(f, "        </%s>\n", el);
    }
}

/* A gate: a thin stripe on the floor across the lane, seen and not felt. */
static void gate_model(FILE *f, const struct kn_terrain *t, const char *name, const double g[3])
{
    double c = cos(t->pose[2]), s = sin(t->pose[2]);
    fprintf(f,
            "    <model name=\"%s\">\n"
            "      <static>true</static>\n"
            "      <pose>%.9g %.9g 0.002 0 0 %.9g</pose>\n"
            "      <link name=\"line\">\n"
            "        <visual name=\"line\">\n"
            "          <geometry><box><size>0.05 %.9g 0.002</size></box></geometry>\n",
            name, t->pose[0] + c * g[0] - s * g[1], t->pose[1] + s * g[0] + c * g[1],
            t->pose[2] + g[2], t->span_y);
    fprintf(f, "          <material>\n"
               "            <ambient>0.9 0.1 0.1 1</ambient>\n"
               "            <diffuse>0.9 0.1 0.1 1</diffuse>\n"
               "          </material>\n"
               "        </visual>\n"
               "      </link>\n"
               "    </model>\n");
}

/* Text inside an XML comment, which must not hold "--" nor end in "-". */
static void comment_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        fputc(*s, f);
        if (*s == '-' && (s[1] == '-' || s[1] == '\0'))
            fputc(' ', f);
    }
}

int kn_sdf_write(FILE *f, const struct kn_terrain *t, const char *source, char *err, size_t errlen)
{
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i].kind == KN_PART_HFIELD) {
            snprintf(err, errlen,
                     "a heightfield terrain has no SDF export (only boxes and planes)");
            return -1;
        }
    const char *type = t->type == KN_TERRAIN_APPARATUS ? kn_apparatus_name(t->apparatus)
                                                       : kn_terrain_type_name(t->type);
    fprintf(f, "<?xml version=\"1.0\"?>\n<!-- ");
    comment_text(f, t->name);
    fprintf(f, ": terrain type %s", type);
    if (t->type == KN_TERRAIN_APPARATUS)
        fprintf(f, " (the apparatus of %s)", kn_apparatus_standard(t->apparatus));
    fprintf(f, ", %d parts, exported by kenaf-engine from ", t->nparts);
    const char *base = source ? strrchr(source, '/') : NULL;
    comment_text(f, base ? base + 1 : source ? source : "a terrain file");
    fprintf(f, " -->\n");
    fprintf(f, "<sdf version=\"1.6\">\n"
               "  <world name=\"kenaf_terrain\">\n"
               "    <gravity>0 0 -9.80665</gravity>\n"
               "    <light name=\"sun\" type=\"directional\">\n"
               "      <cast_shadows>true</cast_shadows>\n"
               "      <pose>0 0 10 0 0 0</pose>\n"
               "      <diffuse>0.8 0.8 0.8 1</diffuse>\n"
               "      <specular>0.2 0.2 0.2 1</specular>\n"
               "      <direction>-0.5 0.1 -0.9</direction>\n"
               "    </light>\n");
    fprintf(f,
            "    <model name=\"terrain\">\n"
            "      <static>true</static>\n"
            "      <pose>%.9g %.9g 0 0 0 %.9g</pose>\n"
            "      <link name=\"parts\">\n",
            t->pose[0], t->pose[1], t->pose[2]);
    for (int i = 0; i < t->nparts; i++)
        part(f, &t->parts[i], i);
    fprintf(f, "      </link>\n"
               "    </model>\n");
    if (t->type == KN_TERRAIN_APPARATUS) {
        gate_model(f, t, "gate_start", t->gate_start);
        gate_model(f, t, "gate_finish", t->gate_finish);
    }
    fprintf(f, "  </world>\n"
               "</sdf>\n");
    if (fflush(f) || ferror(f)) {
        snprintf(err, errlen, "writing the SDF failed");
        return -1;
    }
    return 0;
}
