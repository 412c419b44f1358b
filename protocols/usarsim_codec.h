/* USARSim text protocol codec (docs/usarsim.md): one line in, plain
 * structs out; structs in, one CR LF terminated line out. Used on both
 * sides of the wire: the daemon's USARSim client backend, and the servers
 * that play USARSim (kenaf-engine, the test stand-in). Sans-I/O and
 * allocation-free: results go into caller-provided fixed-size structs whose
 * lists have caps, and what does not fit is counted, never written past.
 * Values stay in USARSim's own frame and units (m, rad, s, rad/s, z down);
 * convert.h does every conversion. Numbers are read and written with '.'
 * whatever the process locale says. docs/usarsim.md ("The text protocol
 * codec") has the prose. */
#ifndef KN_USARSIM_CODEC_H
#define KN_USARSIM_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "state.h"

#define KN_USAR_DEFAULT_PORT 3000
#define KN_USAR_MAX_LINE 16384 /* longest line without its EOL */
#define KN_USAR_MAX_GROUPS 64  /* {...} groups kept per line */
#define KN_USAR_MAX_PAIRS 128  /* key/value pairs kept per line */
#define KN_USAR_MAX_ITEMS 16   /* entries kept per typed list */
#define KN_USAR_NUM_MAX 1e15   /* formatters refuse |v| >= this */
#define KN_USAR_MAX_DECIMALS 9

enum kn_usar_result {
    KN_USAR_OK = 0,
    /* tokenizer */
    KN_USAR_EEMPTY,   /* nothing but blanks and EOL bytes */
    KN_USAR_ETOOLONG, /* more than KN_USAR_MAX_LINE bytes before the EOL */
    KN_USAR_ECTRL,    /* a control byte (NUL, CR or LF inside, ESC, DEL, ...) */
    KN_USAR_EHEAD,    /* no head word, or a head with a byte not in [A-Za-z0-9_] */
    KN_USAR_EBRACE,   /* '{' never closed, '{' inside a group, or '}' outside one */
    KN_USAR_EGROUP,   /* empty group "{}" or a key holding ',' */
    KN_USAR_ESTRAY,   /* text between groups, outside any {...} */
    /* typed parsers */
    KN_USAR_EKIND,     /* the line is another message than the parser reads */
    KN_USAR_EMISSING,  /* a required field is absent */
    KN_USAR_EVALUE,    /* a value is not the number, integer, bool or vector it must be */
    KN_USAR_ESEQUENCE, /* a per-item field before the item opened ({Tick} before {Name}) */
    /* formatters */
    KN_USAR_ENOSPACE, /* the output buffer is too small */
    KN_USAR_ERANGE,   /* a number is NaN, infinite, or |v| >= KN_USAR_NUM_MAX */
    KN_USAR_EARG,     /* an argument cannot go on the wire (empty name, space, brace, ...) */
};

/* Short English text for a result ("unbalanced braces"); never NULL. */
const char *kn_usar_strerror(enum kn_usar_result r);

/* A view into the caller's line: not NUL-terminated, valid as long as the
 * bytes handed to kn_usar_tokenize() are. p may be NULL when n is 0. */
struct kn_usar_str {
    const char *p;
    size_t n;
};

/* A view of a C string (NULL gives the empty view). */
static inline struct kn_usar_str kn_usar_s(const char *s)
{
    struct kn_usar_str v = { s, s ? strlen(s) : 0 };
    return v;
}

/* ASCII case-insensitive comparison with a literal, as USARSim matches
 * heads and keys. */
bool kn_usar_str_is(struct kn_usar_str s, const char *lit);

/* Case-sensitive comparison, for the values UDK compares exactly ("true",
 * "Joint", "Angle"). */
bool kn_usar_str_eq(struct kn_usar_str s, const char *lit);

/* ---- Tokenizer ------------------------------------------------------- */

/* One {...} group, read the way UDK's server reads it: key = first word,
 * value = the rest, trimmed (it may hold spaces). first_pair/n_pairs say
 * which entries of kn_usar_line.pair came from this group. */
struct kn_usar_group {
    struct kn_usar_str key;
    struct kn_usar_str value;
    uint16_t first_pair;
    uint16_t n_pairs;
};

/* One key/value pair, read the way clients read UT2004 output: a group of
 * 2k words (k >= 2) whose words 0, 2, 4, ... all start with a letter and
 * hold no ',' is k pairs ({Name F1 Range 4.56} -> Name=F1, Range=4.56);
 * any other group is one pair with the group's key and whole value. */
struct kn_usar_pair {
    struct kn_usar_str key;
    struct kn_usar_str value;
    uint16_t group; /* index into kn_usar_line.group */
};

/* A tokenized line: the head word, then the groups and the pairs in the
 * order they appear (keys repeat; order carries meaning). Groups or pairs
 * beyond the caps are dropped and counted; the line is still OK. */
struct kn_usar_line {
    struct kn_usar_str head;
    uint16_t n_groups;
    uint16_t n_pairs;
    uint32_t groups_dropped;
    uint32_t pairs_dropped; /* includes the pairs of dropped groups */
    struct kn_usar_group group[KN_USAR_MAX_GROUPS];
    struct kn_usar_pair pair[KN_USAR_MAX_PAIRS];
};

/* Splits one complete line (no framing here: see linebuf.h). Trailing CR
 * and LF bytes, in any number and order, are ignored; blanks (space, tab)
 * around the head and the groups are ignored. On an error the counts are
 * 0. Never reads outside line[0..len). */
enum kn_usar_result kn_usar_tokenize(const char *line, size_t len, struct kn_usar_line *out);

/* Index of the first pair at or after `from` whose key is `key`
 * (case-insensitive), or -1. */
int kn_usar_find(const struct kn_usar_line *l, const char *key, int from);

/* The same over groups. */
int kn_usar_find_group(const struct kn_usar_line *l, const char *key, int from);

/* Value of the first pair with this key, parsed. KN_USAR_EMISSING when
 * there is none, KN_USAR_EVALUE when it does not parse (out untouched). */
enum kn_usar_result kn_usar_get_str(const struct kn_usar_line *l, const char *key,
                                    struct kn_usar_str *out);
enum kn_usar_result kn_usar_get_double(const struct kn_usar_line *l, const char *key, double *out);
enum kn_usar_result kn_usar_get_int(const struct kn_usar_line *l, const char *key, int64_t *out);
enum kn_usar_result kn_usar_get_bool(const struct kn_usar_line *l, const char *key, bool *out);
enum kn_usar_result kn_usar_get_vec3(const struct kn_usar_line *l, const char *key, double out[3]);

/* ---- Values ---------------------------------------------------------- */

/* Decimal number: [+-] digits [. digits] [e|E [+-] digits], at least one
 * digit before or after the point; '.' is the only decimal point whatever
 * the locale. "1,00", "nan", "inf", hex, blanks and results that overflow
 * to infinity are KN_USAR_EVALUE. */
enum kn_usar_result kn_usar_parse_double(struct kn_usar_str s, double *out);

/* [+-] digits, within int64_t. */
enum kn_usar_result kn_usar_parse_int(struct kn_usar_str s, int64_t *out);

/* true/false in any letter case, or 1/0. */
enum kn_usar_result kn_usar_parse_bool(struct kn_usar_str s, bool *out);

/* Exactly three numbers separated by ',' with no blanks ("1.0,-2,0.5"). */
enum kn_usar_result kn_usar_parse_vec3(struct kn_usar_str s, double out[3]);

/* A ','-separated list of numbers (RangeScanner ranges, Tachometer
 * velocities). Up to cap values are stored, the rest counted in
 * *dropped; every one is still checked. */
enum kn_usar_result kn_usar_parse_list(struct kn_usar_str s, double *out, size_t cap, size_t *n,
                                       size_t *dropped);

enum kn_usar_round {
    /* nearest, ties to even: identical to printf("%.*f") in the C locale */
    KN_USAR_ROUND = 0,
    /* USARSim's UnitsConverter.FloatString: v as a single-precision float,
     * fraction times 10^decimals truncated (1.3 -> "1.2999") */
    KN_USAR_TRUNC = 1,
};

/* Fixed-point text of v with `decimals` (0..9) digits after '.', NUL
 * terminated. A negative value that comes out as zero keeps its sign
 * ("-0.000"), as Unreal prints it (TRUNC: only when below zero, so -0.0
 * prints "0.0000"). Returns the length, or -KN_USAR_ERANGE (non-finite,
 * |v| >= KN_USAR_NUM_MAX), -KN_USAR_EARG (decimals), -KN_USAR_ENOSPACE. */
int kn_usar_fmt_fixed(char *buf, size_t cap, double v, int decimals, enum kn_usar_round mode);

/* ---- Message kinds --------------------------------------------------- */

enum kn_usar_kind {
    KN_USAR_K_UNKNOWN = 0,
    /* server -> client */
    KN_USAR_K_NFO,
    KN_USAR_K_STA,
    KN_USAR_K_SEN,
    KN_USAR_K_ASTA,
    KN_USAR_K_MISSTA,
    KN_USAR_K_CONF,
    KN_USAR_K_GEO,
    KN_USAR_K_RES,
    KN_USAR_K_EFF,
    KN_USAR_K_DIE,
    /* client -> server */
    KN_USAR_K_INIT,
    KN_USAR_K_DRIVE,
    KN_USAR_K_SET,
    KN_USAR_K_MULTIDRIVE,
    KN_USAR_K_MISPKG,
    KN_USAR_K_ACT,
    KN_USAR_K_GETCONF,
    KN_USAR_K_GETGEO,
    KN_USAR_K_GETSTARTPOSES,
};

/* The head, matched case-insensitively ("Drive" is DRIVE). */
enum kn_usar_kind kn_usar_kind(const struct kn_usar_line *l);

/* Canonical upper-case head ("DRIVE"), "" for KN_USAR_K_UNKNOWN. */
const char *kn_usar_kind_name(enum kn_usar_kind k);

/* Output flavour for servers: UDK (the default to emulate) or UT2004. */
enum kn_usar_dialect {
    KN_USAR_UDK = 0,
    KN_USAR_UT2004 = 1,
};

/* Kenaf flipper joint names, indexed KN_FL, KN_FR, KN_RL, KN_RR
 * ("FLFlipper", ...; NULL for another k), and the index of a name (any
 * letter case), or -1. */
const char *kn_usar_flipper_name(int k);
int kn_usar_flipper_index(struct kn_usar_str name);

/* ---- Server -> client messages ---------------------------------------
 * Parsers read pairs (so multi-pair UT2004 groups work), match keys
 * case-insensitively, take the first of a repeated scalar key, and return
 * the first error met. Views point into the tokenized line. */

/* STA: robot status. Other fields (FrontSteer, View, ...) stay in the line. */
struct kn_usar_sta {
    bool has_time;
    double time; /* s of game time */
    bool has_battery;
    double battery;          /* s of battery life left; 99999 = no battery */
    struct kn_usar_str type; /* GroundVehicle, ...; empty if absent */
    bool has_light_toggle;
    bool light_toggle;
    bool has_light_intensity;
    double light_intensity;
    uint8_t flipper_mask;         /* bit k set: flipper[k] was reported (UT2004) */
    double flipper[KN_NFLIPPERS]; /* joint angle, rad, indexed KN_FL.. */
};
enum kn_usar_result kn_usar_parse_sta(const struct kn_usar_line *l, struct kn_usar_sta *out);

enum kn_usar_sen_type {
    KN_USAR_SEN_OTHER = 0, /* any other Type: see kn_usar_sen.type */
    KN_USAR_SEN_GROUNDTRUTH,
    KN_USAR_SEN_INS,
    KN_USAR_SEN_ENCODER,
    KN_USAR_SEN_ODOMETRY,
    KN_USAR_SEN_TOUCH,
};

struct kn_usar_tick {
    struct kn_usar_str name;
    int64_t tick;
};

struct kn_usar_touch {
    struct kn_usar_str name;
    bool touch;
};

/* SEN: one sensor reading. GroundTruth and INS need Location and
 * Orientation, Odometry needs Pose; Encoder and Touch are lists of
 * {Name} each followed by its own {Tick}/{Touch}. */
struct kn_usar_sen {
    bool has_time;
    double time;
    struct kn_usar_str type; /* as sent */
    enum kn_usar_sen_type sen_type;
    struct kn_usar_str name; /* the first {Name}; empty if absent */
    double location[3];      /* GroundTruth, INS: m */
    double orientation[3];   /* roll, pitch, yaw, rad, as sent (not wrapped) */
    double pose[3];          /* Odometry: x, y (m), theta (rad) */
    uint16_t n_ticks;
    uint32_t ticks_dropped;
    struct kn_usar_tick ticks[KN_USAR_MAX_ITEMS];
    uint16_t n_touches;
    uint32_t touches_dropped;
    struct kn_usar_touch touches[KN_USAR_MAX_ITEMS];
};
enum kn_usar_result kn_usar_parse_sen(const struct kn_usar_line *l, struct kn_usar_sen *out);

/* One actuator link: ASTA/MISSTA report it, MISPKG/ACT command it. Link
 * numbers are as sent (ASTA, MISSTA, MISPKG 1-based; UDK ACT 0-based). */
struct kn_usar_link {
    struct kn_usar_str name; /* the {Name} in force when the link appeared */
    int64_t link;
    bool has_value;
    double value; /* angle (rad) or position */
    bool has_torque;
    double torque;
    bool has_order;
    int64_t order;
};

/* ASTA, MISSTA, MISPKG, ACT: a {Name}, then {Link n} each followed by its
 * own {Value}/{Torque}/{Order}. A {Name} later in the line renames the
 * links after it. */
struct kn_usar_links {
    bool has_time;
    double time;
    struct kn_usar_str name; /* the first {Name} */
    uint16_t n;
    uint32_t dropped;
    struct kn_usar_link link[KN_USAR_MAX_ITEMS];
};
enum kn_usar_result kn_usar_parse_links(const struct kn_usar_line *l, struct kn_usar_links *out);

struct kn_usar_pose {
    struct kn_usar_str name;
    double location[3];
    double orientation[3];
};

/* NFO: the banner (Gametype, Level, TimeLimit) or the GETSTARTPOSES reply
 * in any of its three shapes: all poses in one group
 * "{tag x,y,z r,p,y tag ...}" (UDK), one such group per pose (USARGazebo),
 * or {Name n Location x,y,z Orientation r,p,y} (UT2004). n_poses is what
 * was parsed; start_poses is the count the server announced. */
struct kn_usar_nfo {
    struct kn_usar_str gametype;
    struct kn_usar_str level;
    bool has_time_limit;
    double time_limit;
    bool has_start_poses;
    int64_t start_poses;
    uint16_t n_poses;
    uint32_t poses_dropped;
    struct kn_usar_pose pose[KN_USAR_MAX_ITEMS];
};
enum kn_usar_result kn_usar_parse_nfo(const struct kn_usar_line *l, struct kn_usar_nfo *out);

/* CONF or GEO about the robot (GETCONF/GETGEO {Type Robot}); only the
 * fields present are set. Item CONF/GEO lines stay generic: use the line
 * and kn_usar_find()/kn_usar_get_*(). */
struct kn_usar_robot {
    struct kn_usar_str name;
    struct kn_usar_str type;          /* GroundVehicle */
    struct kn_usar_str steering_type; /* SkidSteered */
    bool has_mass, has_max_speed, has_max_torque;
    double mass, max_speed, max_torque;
    bool has_dimensions, has_cog;
    double dimensions[3], cog[3];
    bool has_wheel_radius, has_wheel_separation, has_wheel_base;
    double wheel_radius, wheel_separation, wheel_base;
};
enum kn_usar_result kn_usar_parse_robot(const struct kn_usar_line *l, struct kn_usar_robot *out);

/* ---- Client -> server commands ---------------------------------------
 * Parsers read groups the way UDK's server does (key, then the whole rest
 * as the value), match keys case-insensitively and take the first of a
 * repeated key; they are what the engine and the test server use. */

/* INIT: ClassName is required; Location and Rotation are m and rad. */
struct kn_usar_init {
    struct kn_usar_str class_name;
    struct kn_usar_str name;  /* empty if absent */
    struct kn_usar_str start; /* empty if absent */
    bool has_location;
    double location[3];
    bool has_rotation;
    double rotation[3];
};
enum kn_usar_result kn_usar_parse_init(const struct kn_usar_line *l, struct kn_usar_init *out);

/* UT2004 joint form of DRIVE: {Name joint} {Value v} [{Steer s}] [{Order o}]. */
struct kn_usar_joint_cmd {
    struct kn_usar_str name;
    bool has_value;
    double value;
    bool has_steer;
    double steer;
    bool has_order;
    int64_t order;
};

/* DRIVE: skid-steer wheel speeds (rad/s, or percent when normalized), the
 * flags, and joint commands. Other keys (Speed, FrontSteer) stay in the
 * line. UDK acts only when both Left and Right are present. */
struct kn_usar_drive {
    bool has_left, has_right;
    double left, right;
    bool has_normalized, normalized;
    bool has_light, light;
    bool has_flip, flip;
    uint16_t n_joints;
    uint32_t joints_dropped;
    struct kn_usar_joint_cmd joint[KN_USAR_MAX_ITEMS];
};
enum kn_usar_result kn_usar_parse_drive(const struct kn_usar_line *l, struct kn_usar_drive *out);

/* SET {Type T} {Name N} {Opcode O} [{Params P}]: Type, Name and Opcode are
 * required; has_number says whether Params is one number. */
struct kn_usar_set {
    struct kn_usar_str type, name, opcode, params;
    bool has_number;
    double number;
};
enum kn_usar_result kn_usar_parse_set(const struct kn_usar_line *l, struct kn_usar_set *out);

/* MULTIDRIVE {Joint value} ...: every group is a joint and a number. */
struct kn_usar_joint_value {
    struct kn_usar_str name;
    double value;
};
struct kn_usar_multidrive {
    uint16_t n;
    uint32_t dropped;
    struct kn_usar_joint_value joint[KN_USAR_MAX_ITEMS];
};
enum kn_usar_result kn_usar_parse_multidrive(const struct kn_usar_line *l,
                                             struct kn_usar_multidrive *out);

/* GETCONF / GETGEO {Type T} [{Name N}]: Type is required. */
struct kn_usar_get {
    struct kn_usar_str type, name;
};
enum kn_usar_result kn_usar_parse_get(const struct kn_usar_line *l, struct kn_usar_get *out);

/* ---- Line writer -----------------------------------------------------
 * Builds any line: head, then groups " {key value}" separated by one
 * space, then CR LF. Errors are sticky and reported by kn_usar_w_end(), so
 * calls can be chained without checks. Every formatter below uses it. */
struct kn_usar_writer {
    char *buf;
    size_t cap;
    size_t len;
    enum kn_usar_result err;
    bool open; /* a group is open */
};

enum kn_usar_bool_style {
    KN_USAR_BOOL_LOWER = 0, /* true/false: what UDK compares commands against */
    KN_USAR_BOOL_CAPS = 1,  /* True/False: what Unreal prints */
};

void kn_usar_w_init(struct kn_usar_writer *w, char *buf, size_t cap, const char *head);
/* Opens a new group "{key" (closing the open one). */
void kn_usar_w_key(struct kn_usar_writer *w, const char *key);
/* Adds "key" inside the open group: the UT2004 multi-pair shape. */
void kn_usar_w_more(struct kn_usar_writer *w, const char *key);
/* Values for the last key. Text may hold single inner spaces but no
 * braces, control bytes or outer blanks. */
void kn_usar_w_text(struct kn_usar_writer *w, struct kn_usar_str text);
void kn_usar_w_num(struct kn_usar_writer *w, double v, int decimals, enum kn_usar_round mode);
void kn_usar_w_int(struct kn_usar_writer *w, int64_t v);
void kn_usar_w_vec3(struct kn_usar_writer *w, const double v[3], int decimals,
                    enum kn_usar_round mode);
void kn_usar_w_bool(struct kn_usar_writer *w, bool v, enum kn_usar_bool_style style);
/* Shorthands: key + value. */
void kn_usar_w_kv(struct kn_usar_writer *w, const char *key, const char *text);
void kn_usar_w_knum(struct kn_usar_writer *w, const char *key, double v, int decimals);
/* Closes the line with CR LF and a NUL. Returns its length (without the
 * NUL) or -error. */
int kn_usar_w_end(struct kn_usar_writer *w);

/* Re-emits a tokenized line in canonical spacing: one group per group,
 * "{key value}" with the group's value as it was. */
int kn_usar_fmt_line(char *buf, size_t cap, const struct kn_usar_line *l);

/* ---- Client-side formatters (what the daemon sends) ------------------
 * All return the length written (CR LF included, NUL after it) or
 * -error. Numbers get 4 decimals, rounded; booleans are lowercase. Names
 * must be one word without braces. */

/* INIT {ClassName c} {Name n} [{Location x,y,z}] [{Rotation r,p,y}]
 * (location/rotation NULL: left out). */
int kn_usar_fmt_init(char *buf, size_t cap, const char *class_name, const char *name,
                     const double location[3], const double rotation[3]);
/* INIT {ClassName c} {Name n} {Start tag} */
int kn_usar_fmt_init_start(char *buf, size_t cap, const char *class_name, const char *name,
                           const char *start);
/* DRIVE {Left l} {Right r}: wheel spin, rad/s. */
int kn_usar_fmt_drive(char *buf, size_t cap, double left, double right);
/* DRIVE with every field of d that is set, in the order Left, Right,
 * Normalized, Light, Flip, then the joints ({Name}{Value}{Steer}{Order}). */
int kn_usar_fmt_drive_full(char *buf, size_t cap, const struct kn_usar_drive *d);
/* SET {Type Joint} {Name j} {Opcode Angle} {Params rad} (UDK flippers). */
int kn_usar_fmt_set_joint(char *buf, size_t cap, const char *joint, double angle_rad);
/* SET {Type t} {Name n} {Opcode o} [{Params p}] (params NULL: left out). */
int kn_usar_fmt_set(char *buf, size_t cap, const char *type, const char *name, const char *opcode,
                    const char *params);
/* MULTIDRIVE {name value} ... (UT2004), n >= 1. */
int kn_usar_fmt_multidrive(char *buf, size_t cap, const char *const names[], const double values[],
                           size_t n);
/* MULTIDRIVE for the flippers whose bit is in mask, in the order clients
 * send them: FRFlipper, FLFlipper, RRFlipper, RLFlipper (rad[] indexed
 * KN_FL..). */
int kn_usar_fmt_multidrive_flippers(char *buf, size_t cap, const double rad[KN_NFLIPPERS],
                                    uint8_t mask);
/* GETCONF / GETGEO {Type t} [{Name n}] (name NULL: left out). */
int kn_usar_fmt_getconf(char *buf, size_t cap, const char *type, const char *name);
int kn_usar_fmt_getgeo(char *buf, size_t cap, const char *type, const char *name);
/* GETSTARTPOSES */
int kn_usar_fmt_getstartposes(char *buf, size_t cap);

/* ---- Server-side formatters (what the engine sends) ------------------
 * Number formatting follows the real server (docs/usarsim.md, "Number
 * formatting", has the table).
 * Booleans are True/False, as Unreal prints them. */

/* NFO {Gametype g} {Level l} {TimeLimit t} */
int kn_usar_fmt_nfo(char *buf, size_t cap, const char *gametype, const char *level,
                    int64_t time_limit);
/* NFO {StartPoses n} [{tag x,y,z r,p,y tag ...}] (UDK shape, 4 decimals).
 * Tags must be keys (one word, no ',') and not an NFO field name
 * (Gametype, Level, TimeLimit, StartPoses, Name, Location, Orientation). */
int kn_usar_fmt_startposes(char *buf, size_t cap, const struct kn_usar_pose *poses, size_t n);
/* STA in the dialect's field order. Time and Battery go out when their
 * has_ flag is set; type empty means GroundVehicle; LightToggle and
 * LightIntensity default to False and 100 (UDK) / 0 (UT2004); flippers in
 * flipper_mask go out as {FRFlipper a}... (after RearSteer in UDK, before
 * LightToggle in UT2004). */
int kn_usar_fmt_sta(char *buf, size_t cap, const struct kn_usar_sta *s,
                    enum kn_usar_dialect dialect);
/* SEN of s->sen_type (not OTHER); Time goes out when has_time is set.
 * GroundTruth: name, location, orientation (UDK 3 decimals, UT2004 2);
 * INS: same, 2 decimals; Odometry: name, pose (4 decimals); Encoder:
 * ticks ({Name W1} {Tick 0} in UDK, {Name ECLeft Tick 0} in UT2004);
 * Touch: touches, the same way. */
int kn_usar_fmt_sen(char *buf, size_t cap, const struct kn_usar_sen *s,
                    enum kn_usar_dialect dialect);
/* ASTA / MISSTA (server) or MISPKG / ACT (client) from l: {Time} when
 * has_time (ASTA, MISSTA only; 4 / 2 decimals), {Name l->name}, then per
 * link {Link n} and whichever of {Value} (4 decimals), {Torque} (2),
 * {Order} are set. */
int kn_usar_fmt_links(char *buf, size_t cap, enum kn_usar_kind head, const struct kn_usar_links *l);
/* CONF {Name} {Type} {SteeringType} {Mass} {MaxSpeed} {MaxTorque}
 * {MaxFrontSteer 0} {MaxRearSteer 0} and GEO {Type} {Name} {Dimensions}
 * {COG} {WheelRadius} {WheelSeparation} {WheelBase}, the UDK robot
 * replies: 4 decimals with KN_USAR_TRUNC, as UnitsConverter.FloatString
 * prints them (so 1.3 prints as 1.2999). Empty type/steering_type mean GroundVehicle /
 * SkidSteered; fields without their has_ flag are left out. */
int kn_usar_fmt_conf_robot(char *buf, size_t cap, const struct kn_usar_robot *r);
int kn_usar_fmt_geo_robot(char *buf, size_t cap, const struct kn_usar_robot *r);

#endif
