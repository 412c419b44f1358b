/* Terrains of the built-in engine: a terrain file (config/terrains/)
 * names a type and its parameters; kn_terrain_build() turns it into static
 * primitives (planes, oriented boxes, one heightfield) that the world loads
 * as ODE geoms. Nothing here touches ODE. */
#ifndef KN_ENGINE_TERRAIN_H
#define KN_ENGINE_TERRAIN_H

#include <stddef.h>

struct cJSON;

/* Parts of one terrain: the families drawn from a seed (rough ground, a
 * stepfield, rubble) are grids and scatters of boxes, up to a field of
 * 1 000 cells. A part is 96 bytes, so a terrain is about 100 KiB; the
 * world, a scenario and the daemon's world description each hold one (the
 * daemon only while it describes a file). */
#define KN_TERRAIN_MAX_PARTS 1024
#define KN_TERRAIN_MAX_HEIGHTS 16 /* a stepfield's set of post heights */

/* What a part is, for criteria and controllers (which level a robot touches). */
enum kn_tag {
    KN_TAG_GROUND = 1,   /* the level the robot starts on */
    KN_TAG_OBSTACLE = 2, /* step, stairs, pallet, ramp, far side of a trench */
    KN_TAG_PIT = 4,      /* trench floor */
    KN_TAG_WALL = 8,     /* an apparatus's containment walls (terrain_apparatus.c) */
};

enum kn_part_kind { KN_PART_PLANE, KN_PART_BOX, KN_PART_HFIELD };

struct kn_part {
    enum kn_part_kind kind;
    int tag;
    double c[3];    /* box centre; plane: a point on it */
    double half[3]; /* box half extents */
    double pitch;   /* box rotation about y (+ lowers +x end, right-handed) */
    double yaw;     /* then about z */
    double n[3];    /* plane normal (up) */
};

enum kn_terrain_type {
    KN_TERRAIN_FLAT,
    KN_TERRAIN_STEP,
    KN_TERRAIN_TRENCH,
    KN_TERRAIN_STAIRS,
    KN_TERRAIN_RAMP,
    KN_TERRAIN_PALLET,
    KN_TERRAIN_HEIGHTFIELD,
    /* families drawn from a seed (terrain_families.c) */
    KN_TERRAIN_ROUGH,
    KN_TERRAIN_STEPFIELD,
    KN_TERRAIN_RUBBLE,
    /* a test apparatus of ASTM E54 (terrain_apparatus.h); the last type:
     * terrain.c reads the ones before it itself */
    KN_TERRAIN_APPARATUS,
};

struct kn_terrain {
    enum kn_terrain_type type;
    char name[64];
    /* parameters (only those of the type matter) */
    double height;    /* step height [m] */
    double width;     /* trench width [m] */
    double rise, run; /* stairs [m] */
    int count;        /* stairs */
    double angle;     /* ramp angle / flat tilt [rad] */
    double edge_x;    /* x of the obstacle's near edge [m] */
    double length;    /* obstacle / ramp length along x [m] */
    double span_y;    /* obstacle extent across [m] */
    double depth;     /* trench depth [m] */
    double landing;   /* stairs / ramp top landing length [m] */
    double pose[3];   /* x, y, yaw applied to the whole terrain */
    /* heightfield */
    char hf_file[512];
    double hf_cell;
    double hf_scale;
    int hf_nx, hf_ny; /* samples along x, y */
    double *hf;       /* hf[j * hf_nx + i], j along +y, metres (owned) */
    /* families drawn from a seed: rough (cells of hf_cell, heights up to
     * amplitude), stepfield (posts of post metres, grid[0] along x by
     * grid[1] across, heights from heights[]), rubble (pieces boxes, sides
     * and heights between the two bounds, any yaw) */
    int seed;
    double amplitude;
    double post;
    int grid[2];
    double heights[KN_TERRAIN_MAX_HEIGHTS];
    int nheights;
    int pieces;
    double piece_size[2], piece_height[2];
    /* an apparatus (terrain_apparatus.h): which one, its walls, post or
     * module size, and its start and finish gates (x, y, yaw; terrain
     * coordinates) */
    int apparatus;
    double wall_height, cell;
    double approach, exit_len; /* lane before edge_x and after the obstacle [m] */
    double gate_start[3], gate_finish[3];
    /* derived by kn_terrain_build, in terrain coordinates (before pose) */
    double far_x; /* x beyond which the obstacle is passed (trench far edge, stairs
                          top landing, pallet far edge) */
    double top_z; /* height of the upper level */
    int nparts;
    struct kn_part parts[KN_TERRAIN_MAX_PARTS];
};

/* Reads a terrain file; keys in override (may be NULL) replace the file's
 * (so a scenario can say {"file": "step.json", "height": 0.2}). Builds parts.
 * On error returns -1 with a message naming the file and key. */
int kn_terrain_load(const char *path, const struct cJSON *override, struct kn_terrain *t, char *err,
                    size_t errlen);
/* The terrain object kn_terrain_load reads: the file's, with override's
 * keys (but "file") put over it. NULL with the reason in err. */
struct cJSON *kn_terrain_spec(const char *path, const struct cJSON *override, char *err,
                              size_t errlen);
/* spec (what t was built from) as one JSON text (free()) that builds the
 * same terrain wherever it is read: a heightfield of at most
 * KN_TERRAIN_INLINE_MAX samples carries them ("samples" instead of
 * "file"), a bigger one's "file" becomes the absolute path of the samples
 * t read (on this machine only). NULL when out of memory. */
#define KN_TERRAIN_INLINE_MAX 4096 /* 64 x 64: at most about 74 KB of text */
char *kn_terrain_spec_text(const struct cJSON *spec, const struct kn_terrain *t);
/* From a JSON object (type and parameters); base_path resolves a
 * heightfield's data file. */
int kn_terrain_from_json(const struct cJSON *o, const char *base_path, struct kn_terrain *t,
                         char *err, size_t errlen);
/* Fills parts from the parameters; -1 if they do not fit KN_TERRAIN_MAX_PARTS. */
int kn_terrain_build(struct kn_terrain *t, char *err, size_t errlen);
/* Frees the heightfield samples. */
void kn_terrain_free(struct kn_terrain *t);
/* Deep copy (heightfield samples included). */
int kn_terrain_copy(struct kn_terrain *dst, const struct kn_terrain *src);
const char *kn_terrain_type_name(enum kn_terrain_type t);
/* A world point (x, y) in the terrain's own frame (its pose undone), and a
 * world yaw as a yaw in that frame: controllers and criteria that refer to
 * the obstacle then work wherever the terrain is placed. */
void kn_terrain_to_local(const struct kn_terrain *t, const double w[2], double l[2]);
double kn_terrain_yaw_local(const struct kn_terrain *t, double yaw);
/* Mirrors the built terrain across its x-z plane (y -> -y): parts and
 * heightfield samples; the pose is left alone. */
void kn_terrain_mirror_y(struct kn_terrain *t);

/* terrain_families.c: the families' keys (their defaults first, then
 * what o says), and their parts drawn from the seed; the same seed and
 * keys give the same parts on every machine (splitmix64, not rand()).
 * Both -1 with the reason in err. */
int kn_terrain_family_keys(const struct cJSON *o, struct kn_terrain *t, const char *ctx, char *err,
                           size_t errlen);
int kn_terrain_family_build(struct kn_terrain *t);
/* One more part, zeroed; NULL when the terrain holds KN_TERRAIN_MAX_PARTS. */
struct kn_part *kn_terrain_part_add(struct kn_terrain *t);
/* One axis-aligned box from its x, y and z ranges; -1 when full. */
int kn_terrain_box_add(struct kn_terrain *t, double x0, double x1, double y0, double y1, double z0,
                       double z1, int tag);
/* A level plane at height z (terrain.c's own builders' plane). */
int kn_terrain_plane_add(struct kn_terrain *t, double z, int tag);

/* Reads a heightfield data file: whitespace-separated heights in metres,
 * one line per row along +y, all rows the same length; '#' starts a comment. */
int kn_heightfield_read(const char *path, double **h, int *nx, int *ny, char *err, size_t errlen);

#endif
