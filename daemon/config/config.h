/* kenaf-simd configuration: the JSON file (config/kenaf-simd.json), checked
 * against config/kenaf-simd.schema.json, loaded into these structs. */
#ifndef KN_CONFIG_H
#define KN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "access.h"
#include "state.h"

/* Robots per daemon. The config is always on the heap (about 6.5 KB per
 * entry); the daemon's own tables are sized to the robots configured, and
 * the sockets they need are checked against RLIMIT_NOFILE at start
 * (daemon/fdlimit.h). */
#define KN_CFG_MAX_ROBOTS 1024
#define KN_CFG_NAME_LEN 16
#define KN_CFG_HOST_LEN 256
#define KN_CFG_PATH_LEN 512
#define KN_CFG_MAX_FILE_BYTES (1024 * 1024) /* config and schema files */
#define KN_CFG_MAX_ERRORS 32                /* problems reported per load */
#define KN_CFG_GROUP_LEN 32                 /* stats_socket_group */
#define KN_CFG_SOCKET_MODE 0660             /* stats_socket_mode default, and its upper bound */
#define KN_CFG_READY_TIMEOUT_S 30.0
#define KN_CFG_CAPTURE_MAX_MB 1024ull
#define KN_CFG_MAX_CONSOLES 16

enum kn_log_level { KN_LOG_ERROR = 0, KN_LOG_WARN, KN_LOG_INFO, KN_LOG_DEBUG };

enum kn_backend_kind {
    KN_BACKEND_ENGINE = 0, /* built-in engine; spawned when no address */
    KN_BACKEND_USARSIM,
    KN_BACKEND_GAZEBO,
    KN_BACKEND_STANDIN, /* test stand-in (tests/), JSON lines over TCP */
    KN_BACKEND_GZ,      /* modern Gazebo (gz-sim) over gz-transport */
};

enum kn_usarsim_dialect { KN_USARSIM_UDK = 0, KN_USARSIM_UT2004 };

/* Per-joint flipper mapping onto a simulator joint: sim = sign * krp + offset. */
struct kn_cfg_joint {
    char name[64];
    char link[64]; /* gazebo: the flipper's link; "" = from the joint name */
    double sign;   /* +1 or -1 */
    double offset_rad;
};

struct kn_cfg_backend {
    enum kn_backend_kind kind;
    char host[KN_CFG_HOST_LEN];                /* empty: engine is spawned locally */
    uint16_t port;                             /* 0: the backend's default */
    double connect_timeout_s;                  /* per attempt */
    double reconnect_max_s;                    /* backoff cap, <= 1 s */
    double stale_ms;                           /* sensor data older than this sets STALE */
    double wheel_radius_m;                     /* belt speed / radius = wheel rad/s */
    double counts_per_tick;                    /* simulator encoder tick -> KRP count */
    struct kn_cfg_joint flipper[KN_NFLIPPERS]; /* FL, FR, RL, RR */

    /* usarsim and engine (the engine speaks the USARSim protocol) */
    enum kn_usarsim_dialect dialect;
    char class_name[64];        /* "USARBot.Kenaf" */
    char start_tag[64];         /* spawn at a PlayerStart, or "" */
    double spawn_location_m[3]; /* KRP world frame (z up) */
    double spawn_rpy_rad[3];
    double encoder_sign[2]; /* L, R: -1 where forward belts count down */

    /* engine only */
    char engine_path[KN_CFG_PATH_LEN]; /* "" = next to kenaf-simd, then PATH */
    char terrain[KN_CFG_PATH_LEN];     /* terrain name or file for a spawned engine */
    char robot[KN_CFG_PATH_LEN];       /* robot name or file for a spawned engine */
    double silent_restart_s;           /* a spawned engine silent this long is restarted */
    bool lockstep;                     /* engine: robot time passes only on KRP/1 STEP */

    /* gazebo only */
    char model[64];
    bool twist_cmd; /* cmd_vel_twist (Twist) vs cmd_vel (Pose) */
    double tracks_separation_m;
    double steering_efficiency;
    double max_linear_speed_m_s;    /* the plugin's limits: commands are */
    double max_angular_speed_rad_s; /* scaled to fit them, path kept */

    /* gz only (model, tracks_separation_m and steering_efficiency above
     * too; flipper joint names in flipper[].name) */
    char world[128];      /* /world/<world>/... */
    char partition[128];  /* "": GZ_PARTITION, IGN_PARTITION, else host:user */
    char gz_ip[64];       /* "": GZ_IP, IGN_IP, else the host's address */
    int gz_family;        /* -1 detect, 0 ignition.msgs, 1 gz.msgs */
    char pose_topic[128]; /* "": /world/<world>/pose/info */
};

/* Seeded fault injection on one link (daemon/faults.h): each datagram
 * (KRP/1, both directions) or command (toward the simulator) is dropped,
 * duplicated, held back behind the next one or delayed with these
 * probabilities and times. All zero: the link is left alone. */
struct kn_cfg_faults {
    double drop;      /* probability 0..1 */
    double duplicate; /* probability 0..1 */
    double reorder;   /* probability 0..1 */
    double delay_ms;  /* added to every item, 0..60000 */
    double jitter_ms; /* uniform +- around delay_ms, 0..60000 */
    uint64_t seed;    /* 0..2^53-1; same seed + same input = same faults */
};

/* An operator console's address; port 0 matches every port. */
struct kn_cfg_console {
    char host[64];
    uint16_t port;
};

struct kn_cfg_robot {
    char name[KN_CFG_NAME_LEN + 1];
    char bind_host[KN_CFG_HOST_LEN]; /* "127.0.0.1", "::", ... */
    uint16_t port;                   /* KRP/1 UDP port */
    double watchdog_ms;              /* default 500 */
    int32_t max_speed_mm_s;          /* default 800 */
    int32_t flipper_min_cdeg;        /* default -11950 */
    int32_t flipper_max_cdeg;        /* default 11950 */
    int32_t counts_per_m;            /* reported in HELLO_ACK */
    double battery_v;                /* reported when the simulator has none */
    /* Operator consoles (docs/protocol.md "Sessions"): may always drive
     * and release the e-stop. Port 0: every port of the address. */
    struct kn_cfg_console consoles[KN_CFG_MAX_CONSOLES];
    size_t n_consoles;
    bool hello_to_drive; /* set-points need a HELLO first */
    struct kn_cfg_backend backend;
    struct kn_cfg_faults faults_krp; /* KRP/1 datagrams, both directions */
    struct kn_cfg_faults faults_sim; /* commands toward the simulator */
    bool fault_injection;            /* the top-level key, for this robot's injector */
    struct kn_access access;         /* allow_drivers, allow_observers */
    /* key_file (docs/protocol.md "Extension: shared key"): read and checked
     * when the config is loaded; key_len 0 = no key. */
    char key_file[KN_CFG_PATH_LEN];
    uint8_t key[64];
    size_t key_len;
};

struct kn_config {
    char source[KN_CFG_PATH_LEN]; /* file it came from */
    bool source_stat_ok;          /* source_stat holds the file's fstat as read */
    struct stat source_stat;      /* owner and mode, for config_check's trust rule */
    enum kn_log_level log_level;
    char stats_socket[KN_CFG_PATH_LEN];            /* "" = no stats socket */
    bool stats_socket_default;                     /* not in the file: the default (sockdir.h) */
    unsigned stats_socket_mode;                    /* exact permission bits, default 0660 */
    char stats_socket_group[KN_CFG_GROUP_LEN + 1]; /* name or number; "" = our own group */
    char capture_dir[KN_CFG_PATH_LEN]; /* run-time captures (capdir.h); "" = none found */
    bool capture_dir_default;          /* not in the file: the default (capdir.h) */
    uint64_t capture_max_bytes;        /* cap per capture file; 0 = none; default 1 GiB */
    double ready_timeout_s;            /* READY=1 after this at the latest; 0 = at once */
    bool fault_injection;              /* false: no faults sections, "faults" command refused */
    int32_t coalesce_us;               /* the loop's coalescing window (coalesce.h); 0 = none */
    double notify_watchdog_s;          /* informational; systemd sets the real one */
    size_t n_robots;
    struct kn_cfg_robot robots[KN_CFG_MAX_ROBOTS];
};

/* Load and validate. On failure returns -1, leaves *out untouched and
 * writes one line per problem (at most KN_CFG_MAX_ERRORS, lines separated
 * by '\n', cut to errlen) into err
 * ("FILE: $.robots[0].watchdog_ms: expected number 50..10000, got 20").
 * schema_path NULL: the built-in schema; otherwise that schema file. */
int kn_config_load(const char *path, const char *schema_path, struct kn_config *out, char *err,
                   size_t errlen);

/* Like kn_config_load, but *out is always filled: with the config when
 * it is valid, else with what did load (defaults where a value was
 * refused, no robots when the file could not be parsed), so that further
 * checks can look at the rest. Schema and rule problems are reported
 * together, one line per JSON path. Returns the number of problems (0:
 * valid; those past KN_CFG_MAX_ERRORS count too). */
size_t kn_config_load_all(const char *path, const char *schema_path, struct kn_config *out,
                          char *err, size_t errlen);

/* Like kn_config_load, from a buffer of len bytes (need not be NUL-terminated; any bytes
 * are safe); name is used in messages. */
int kn_config_parse(const char *json, size_t len, const char *name, const char *schema_path,
                    struct kn_config *out, char *err, size_t errlen);

/* Appends one problem line in the format of every config problem,
 * "FILE: PATH: message" (PATH NULL: "FILE: message"), to the lines in err
 * (separated by '\n'; a line that does not fit is cut and ends in "...").
 * For checks made after loading. */
void kn_config_add_problem(char *err, size_t errlen, const char *file, const char *path,
                           const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The effective config (defaults filled in, angles in degrees) as JSON in
 * the file layout, two-space indented, no final newline; it loads back
 * to an equal config. NULL when out of memory; caller frees with free(). */
char *kn_config_to_json(const struct kn_config *cfg);

/* The schema built into the daemon (config/kenaf-simd.schema.json at
 * build time), used when schema_path is NULL; *len gets its size. */
const char *kn_config_schema_text(size_t *len);

/* True when two robot entries would behave the same (SIGHUP keeps those). */
bool kn_config_robot_equal(const struct kn_cfg_robot *a, const struct kn_cfg_robot *b);

#endif
