/* KRP/1 wire codec: the robot's UDP protocol (docs/protocol.md) as plain
 * structs. Sans-I/O: bytes in, structs out and back; no sockets,
 * no clocks, no allocation. Both sides (library and daemon) use it. */
#ifndef KN_KRP_H
#define KN_KRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KN_KRP_VERSION 1
#define KN_KRP_MAGIC0 0x4B /* 'K' */
#define KN_KRP_MAGIC1 0x4E /* 'N' */
#define KN_KRP_HDR_LEN 12
#define KN_KRP_MAX_DGRAM 512
#define KN_KRP_DEFAULT_PORT 9750
#define KN_KRP_NAME_LEN 16

enum kn_krp_type {
    /* controller -> robot */
    KN_KRP_HELLO = 0x01,
    KN_KRP_CRAWLER = 0x02,
    KN_KRP_FLIPPER = 0x03,
    KN_KRP_STOP = 0x04,
    KN_KRP_STATUS_REQ = 0x05,
    KN_KRP_SUBSCRIBE = 0x06,
    KN_KRP_ESTOP = 0x07,
    KN_KRP_WORLD_REQ = 0x08,      /* world description extension */
    KN_KRP_BYE = 0x09,            /* sessions extension: the client leaves */
    KN_KRP_STEP = 0x0A,           /* lockstep extension: let robot time pass, then STATUS */
    KN_KRP_ESTOP_INFO_REQ = 0x0B, /* e-stop info extension: who holds the e-stop */
    KN_KRP_TRIAL_REQ = 0x0C,      /* trials extension: the trial's state, or a reset */
    /* robot -> controller */
    KN_KRP_ACK = 0x80,
    KN_KRP_HELLO_ACK = 0x81,
    KN_KRP_STATUS = 0x85,
    KN_KRP_WORLD = 0x86,      /* world description extension */
    KN_KRP_ESTOP_INFO = 0x87, /* e-stop info extension */
    KN_KRP_TRIAL = 0x88,      /* trials extension */
    KN_KRP_ERROR = 0xFF,
};

/* Header flag bits. Unknown bits are ignored by receivers. Bits 1-3 are
 * the sessions extension (docs/protocol.md, "Sessions"): a robot that
 * does not know it ignores them like any unknown bit, except that TOKEN
 * changes the payload length, so a client sets it only after a HELLO_ACK
 * that opened a session. */
#define KN_KRP_F_ACK_REQ 0x0001u
#define KN_KRP_F_SESSION 0x0002u  /* HELLO: open a session (HELLO_ACK says role, token) */
#define KN_KRP_F_OBSERVER 0x0004u /* HELLO with SESSION: observe, do not drive */
#define KN_KRP_F_TOKEN 0x0008u    /* controller -> robot: 4-byte session token after the payload */

/* ERROR codes on the wire. */
enum kn_krp_errcode {
    KN_KRP_ERR_BAD_VERSION = 2,
    KN_KRP_ERR_BAD_LENGTH = 3,
    KN_KRP_ERR_UNKNOWN_TYPE = 4,
    KN_KRP_ERR_RANGE = 5,
    KN_KRP_ERR_ESTOP = 6,
    KN_KRP_ERR_BACKEND_DOWN = 7,
    KN_KRP_ERR_BUSY = 8,
    KN_KRP_ERR_NOT_OWNER = 9,    /* sessions: another client drives / holds the e-stop */
    KN_KRP_ERR_BAD_SESSION = 10, /* sessions: token missing, unknown or stale */
    KN_KRP_ERR_NO_MODEL = 11,    /* the simulator runs, the robot's model is not in its world */
    KN_KRP_ERR_NO_ACTUATOR = 12, /* nothing in the simulator acts on this command (refused) */
    /* from 64 on: kenaf-simd's extensions */
    KN_KRP_ERR_NOT_ALLOWED = 64, /* allow-lists: a driving command from an observer-only address */
    KN_KRP_ERR_NO_TRIAL = 65,    /* trials: TRIAL_REQ to a robot that runs no trial */
};
#define KN_KRP_ERR_MAX 12 /* the last of KRP/1's own codes (2..12) */
/* Counters by ERROR code are indexed by the whole byte: a code nobody
 * named (a newer robot's) is still counted, as "other". */
#define KN_KRP_ERR_CODES 256

/* Session roles in a session HELLO_ACK. */
enum kn_krp_role {
    KN_KRP_ROLE_DRIVER = 1,
    KN_KRP_ROLE_OBSERVER = 2,
};

/* STATUS state flag bits. */
#define KN_KRP_ST_ESTOP 0x0001u
#define KN_KRP_ST_BACKEND_UP 0x0002u
#define KN_KRP_ST_SIMULATED 0x0004u
#define KN_KRP_ST_WATCHDOG 0x0008u
#define KN_KRP_ST_CLAMPED 0x0010u
#define KN_KRP_ST_STALE 0x0020u

/* HELLO_ACK backend ids and capability bits. */
enum kn_krp_backend {
    KN_KRP_BACKEND_HARDWARE = 0,
    KN_KRP_BACKEND_ENGINE = 1,
    KN_KRP_BACKEND_USARSIM = 2,
    KN_KRP_BACKEND_GAZEBO = 3,
};
#define KN_KRP_CAP_FLIPPER_TORQUE 0x0001u
#define KN_KRP_CAP_GROUND_TRUTH 0x0002u
#define KN_KRP_CAP_LOCKSTEP 0x0004u /* the robot clock moves only on STEP */
#define KN_KRP_CAP_WORLD 0x0008u    /* answers WORLD_REQ with a world description */
#define KN_KRP_CAP_SESSIONS 0x0010u /* knows sessions, one driver at a time, BYE */
/* bit 5 (0x0020) is the shared key's, krp_mac.h */
#define KN_KRP_CAP_ESTOP_INFO 0x0040u /* answers ESTOP_INFO_REQ with ESTOP_INFO */
#define KN_KRP_CAP_TRIAL 0x0080u      /* runs a trial: answers TRIAL_REQ with TRIAL */

/* Flipper order on the wire. */
enum { KN_KRP_FL = 0, KN_KRP_FR = 1, KN_KRP_RL = 2, KN_KRP_RR = 3, KN_KRP_FLIPPERS = 4 };

/* Payload sizes, fixed per type; WORLD's is its fixed part, followed by
 * 0..KN_KRP_WORLD_CHUNK bytes of the document. */
#define KN_KRP_LEN_HELLO 16
#define KN_KRP_LEN_CRAWLER 8
#define KN_KRP_LEN_FLIPPER 20
#define KN_KRP_LEN_STOP 0
#define KN_KRP_LEN_STATUS_REQ 0
#define KN_KRP_LEN_SUBSCRIBE 2
#define KN_KRP_LEN_ESTOP 1
#define KN_KRP_LEN_WORLD_REQ 4
#define KN_KRP_LEN_ACK 8
#define KN_KRP_LEN_HELLO_ACK 40
#define KN_KRP_LEN_HELLO_ACK_SESSION 48 /* + role, pad, token */
#define KN_KRP_LEN_BYE 0
#define KN_KRP_LEN_STEP 4
#define KN_KRP_LEN_TOKEN 4
#define KN_KRP_LEN_STATUS 112
#define KN_KRP_LEN_ERROR 8
#define KN_KRP_LEN_WORLD 8
#define KN_KRP_WORLD_CHUNK 480 /* document bytes in one WORLD, at most */
#define KN_KRP_LEN_ESTOP_INFO_REQ 0
#define KN_KRP_LEN_ESTOP_INFO 4 /* fixed part, then n entries */
#define KN_KRP_ESTOP_ENTRY_LEN 24
#define KN_KRP_ESTOP_ENTRIES 20 /* entries in one ESTOP_INFO, at most (4 + 480 bytes) */
#define KN_KRP_LEN_TRIAL_REQ 4
#define KN_KRP_LEN_TRIAL 72
#define KN_KRP_TRIAL_NAME_LEN 32

struct kn_krp_header {
    uint8_t version;
    uint8_t type;
    uint32_t seq;
    uint16_t length; /* payload bytes, a TOKEN's 4 included */
    uint16_t flags;
    uint32_t token; /* with KN_KRP_F_TOKEN on a controller -> robot type */
};

struct kn_krp_hello {
    char name[KN_KRP_NAME_LEN + 1]; /* NUL-terminated on decode */
};

struct kn_krp_crawler {
    int32_t left_mm_s;
    int32_t right_mm_s;
};

struct kn_krp_flipper {
    uint8_t mask; /* bit k selects flipper k (FL, FR, RL, RR) */
    int32_t target_cdeg[KN_KRP_FLIPPERS];
};

struct kn_krp_subscribe {
    uint16_t period_ms;
};

struct kn_krp_estop {
    uint8_t engage;
};

/* Asks for the world document's bytes from offset on. */
struct kn_krp_world_req {
    uint32_t offset;
};

/* One chunk of the world document (a UTF-8 JSON text, docs/protocol.md):
 * data[0..n) are its bytes from offset on, total_len its whole size. */
struct kn_krp_world {
    uint32_t total_len;
    uint32_t offset;
    uint16_t n; /* 0..KN_KRP_WORLD_CHUNK */
    uint8_t data[KN_KRP_WORLD_CHUNK];
};

/* Lockstep: the robot clock is to advance by advance_us, then the robot
 * answers with one STATUS whose req_seq is this STEP's seq. */
struct kn_krp_step {
    uint32_t advance_us; /* KN_KRP_STEP_MIN_US..KN_KRP_STEP_MAX_US */
};
#define KN_KRP_STEP_MIN_US 1000u
#define KN_KRP_STEP_MAX_US 10000000u

/* Who holds an e-stop engagement, on the wire (ESTOP_INFO entry kind). */
enum kn_krp_engager {
    KN_KRP_ENG_PLAIN = 1,   /* a client without a session */
    KN_KRP_ENG_SESSION = 2, /* a session client */
    KN_KRP_ENG_CONSOLE = 3, /* a configured console */
    KN_KRP_ENG_ADMIN = 4,   /* the robot's administrator */
};

/* One engagement of the e-stop circuit. */
struct kn_krp_estop_entry {
    uint8_t kind;                   /* enum kn_krp_engager */
    uint8_t present;                /* 1: its engager is still heard from */
    uint32_t held_ms;               /* how long it has held */
    char name[KN_KRP_NAME_LEN + 1]; /* the engager's HELLO name ("admin"); NUL-terminated */
};

/* Who holds the e-stop: engaged engagements in all, the first n of them
 * listed (engaged > n when more hold than one datagram lists). */
struct kn_krp_estop_info {
    uint8_t engaged;
    uint8_t n; /* 0..KN_KRP_ESTOP_ENTRIES */
    struct kn_krp_estop_entry e[KN_KRP_ESTOP_ENTRIES];
};

/* Trials: what TRIAL_REQ asks. */
enum kn_krp_trial_op {
    KN_KRP_TRIAL_OP_STATE = 0, /* answer with TRIAL */
    KN_KRP_TRIAL_OP_RESET = 1, /* the robot back to the start gate (a driving action) */
};

struct kn_krp_trial_req {
    uint8_t op; /* enum kn_krp_trial_op */
};

/* TRIAL flags, course and why it ended. */
#define KN_KRP_TRIAL_F_UNDER_WAY 0x01u /* the repetition rep is under way */
#define KN_KRP_TRIAL_F_ENDED 0x02u     /* the trial is over (end says why) */
enum kn_krp_trial_course { KN_KRP_TRIAL_TRAVERSE = 0, KN_KRP_TRIAL_FIGURE8 = 1 };
enum kn_krp_trial_end {
    KN_KRP_TRIAL_END_NONE = 0,
    KN_KRP_TRIAL_END_DONE = 1,       /* every repetition done */
    KN_KRP_TRIAL_END_TIP_OVER = 2,   /* a tip-over ended it */
    KN_KRP_TRIAL_END_TIME_LIMIT = 3, /* the time limit */
    KN_KRP_TRIAL_END_PROGRAM = 4,    /* the program (or console) ended it */
};
/* Faults by kind, in the wire's order (the engine's enum kn_trial_fault). */
enum {
    KN_KRP_TF_TIP_OVER = 0,
    KN_KRP_TF_WALL = 1,
    KN_KRP_TF_LANE = 2,
    KN_KRP_TF_ESTOP = 3,
    KN_KRP_TF_ASSIST = 4,
    KN_KRP_TRIAL_FAULT_KINDS = 5
};

/* A trial's state as it goes (docs/protocol.md, "Extension: trials"). */
struct kn_krp_trial {
    char name[KN_KRP_TRIAL_NAME_LEN + 1]; /* NUL-terminated on decode */
    uint8_t course;                       /* enum kn_krp_trial_course */
    uint8_t flags;                        /* KN_KRP_TRIAL_F_* */
    uint8_t end;                          /* enum kn_krp_trial_end */
    uint16_t reps;                        /* repetitions asked for */
    uint16_t rep;                         /* the repetition under way or next, 0-based */
    uint32_t rep_elapsed_ms;
    uint16_t rep_faults;
    uint16_t completed;
    uint16_t successes; /* completed without a fault */
    uint16_t faults;
    uint16_t by_kind[KN_KRP_TRIAL_FAULT_KINDS];
    uint32_t limit_ms; /* the trial's time limit; 0: none */
    uint32_t left_ms;  /* its time left */
};

struct kn_krp_ack {
    uint32_t acked_seq;
    uint8_t acked_type;
};

struct kn_krp_hello_ack {
    uint16_t protocol;
    uint8_t simulated;
    uint8_t backend;
    char robot_name[KN_KRP_NAME_LEN + 1];
    uint32_t capabilities;
    int32_t counts_per_m;
    int32_t max_speed_mm_s;
    int32_t flipper_min_cdeg;
    int32_t flipper_max_cdeg;
    /* sessions extension: present (48-byte payload) when session is true */
    bool session;
    uint8_t role; /* enum kn_krp_role */
    uint32_t token;
};

struct kn_krp_status {
    uint32_t req_seq;
    uint64_t time_us;
    int32_t crawler_count[2];
    int32_t crawler_speed_mm_s[2];
    int32_t flipper_cdeg[KN_KRP_FLIPPERS];
    int32_t flipper_torque_mnm[KN_KRP_FLIPPERS];
    int32_t rpy_cdeg[3];
    int32_t rate_mdeg_s[3];
    int32_t accel_mm_s2[3];
    int32_t pos_mm[3];
    uint16_t battery_mv;
    uint16_t flags;
};

struct kn_krp_error {
    uint32_t offending_seq;
    uint8_t offending_type;
    uint8_t code;
};

struct kn_krp_msg {
    struct kn_krp_header h;
    union {
        struct kn_krp_hello hello;
        struct kn_krp_crawler crawler;
        struct kn_krp_flipper flipper;
        struct kn_krp_subscribe subscribe;
        struct kn_krp_estop estop;
        struct kn_krp_world_req world_req;
        struct kn_krp_step step;
        struct kn_krp_ack ack;
        struct kn_krp_hello_ack hello_ack;
        struct kn_krp_status status;
        struct kn_krp_error error;
        struct kn_krp_world world;
        struct kn_krp_estop_info estop_info;
        struct kn_krp_trial_req trial_req;
        struct kn_krp_trial trial;
    } u;
};

/* What a datagram is, or which rule of the envelope it breaks, in the order
 * the checks run. KN_KRP_EMAGIC is dropped without answer; the others are
 * answered with the ERROR code kn_krp_error_code() gives. */
enum kn_krp_result {
    KN_KRP_OK = 0,
    KN_KRP_EMAGIC,   /* fewer than 2 bytes or wrong magic */
    KN_KRP_ESHORT,   /* good magic, header incomplete (< 12 bytes) */
    KN_KRP_ETOOBIG,  /* over 512 bytes */
    KN_KRP_EVERSION, /* version != 1 */
    KN_KRP_ELENGTH,  /* header length field != datagram length - 12 */
    KN_KRP_ETYPE,    /* type not in the protocol */
    KN_KRP_EPAYLOAD, /* payload length wrong for the type (and its TOKEN flag) */
};

/* Decode one datagram. On any result but EMAGIC/ESHORT/ETOOBIG, m->h holds
 * the decoded header fields (for the ERROR answer's offending seq and type);
 * otherwise m->h is zeroed. Never reads past len. */
enum kn_krp_result kn_krp_decode(const uint8_t *buf, size_t len, struct kn_krp_msg *m);

/* Wire ERROR code for a decode failure; 0 for OK and EMAGIC (no answer). */
uint8_t kn_krp_error_code(enum kn_krp_result r);

/* Short fixed text naming the rule ("bad magic", ...). */
const char *kn_krp_result_str(enum kn_krp_result r);

/* Name of a message type ("CRAWLER"), or NULL when unknown. */
const char *kn_krp_type_name(uint8_t type);

/* Name of an ERROR code ("RANGE"), or NULL when unknown. */
const char *kn_krp_error_name(uint8_t code);

/* Payload length of a known type (for WORLD and ESTOP_INFO their fixed
 * part), or -1 when the type is unknown. */
int kn_krp_payload_len(uint8_t type);

/* Longest payload of a known type (WORLD: fixed part + a full chunk;
 * ESTOP_INFO: 20 entries), or -1 when the type is unknown. */
int kn_krp_payload_max(uint8_t type);

/* True for the types a controller sends to the robot. */
bool kn_krp_is_to_robot(uint8_t type);

/* Two TRIAL payloads say the same, every field (the name up to its NUL):
 * the struct has padding, so memcmp would not do. */
bool kn_krp_trial_equal(const struct kn_krp_trial *a, const struct kn_krp_trial *b);

/* Encode m (m->h.length is ignored and derived from m->h.type, for WORLD
 * from m->u.world.n, for ESTOP_INFO from m->u.estop_info.n, for
 * HELLO_ACK from m->u.hello_ack.session, plus 4
 * when a controller -> robot type has KN_KRP_F_TOKEN (m->h.token is then
 * appended); version is always 1). Returns the datagram
 * length, or 0 when the type is unknown, a WORLD's n is over
 * KN_KRP_WORLD_CHUNK, an ESTOP_INFO's over KN_KRP_ESTOP_ENTRIES, or cap
 * is too small. */
size_t kn_krp_encode(const struct kn_krp_msg *m, uint8_t *buf, size_t cap);

/* Convenience: fill m->h for a message of the given type. */
void kn_krp_init(struct kn_krp_msg *m, uint8_t type, uint32_t seq, uint16_t flags);

/* RFC 1982 serial-number arithmetic on 32-bit seqs: true when a is newer than b. */
static inline bool kn_krp_seq_newer(uint32_t a, uint32_t b)
{
    return a != b && (uint32_t)(a - b) < 0x80000000u;
}

#endif
