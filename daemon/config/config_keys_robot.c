/* The descriptions of the keys of one robot entry (config_keys.h), but for
 * its backend section (config_keys_backend.c), in output order. */
#include <stddef.h>

#include "config_keys.h"
#include "config_priv.h"

/* The keys of one faulty link L (krp, sim) of a robot, into faults_L.
 * L and KEY are pasted into names and strings, where parentheses cannot go. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define FAULT_NUMBER(L, KEY, MAX, DOC)                                        \
    {                                                                         \
        .path = "robots[].faults." #L "." #KEY, .type = KN_CFG_NUMBER,        \
        ROBOT_FIELD(faults_##L.KEY), .min = 0, .max = MAX, .def = "0",        \
        .flags = KN_CFG_FAULTS | KN_CFG_RANGE, .reload = KN_CFG_RELOAD_ROBOT, \
        .reader = "daemon/faults.c", .doc = DOC                               \
    }
#define FAULT_KEYS(L, DOC)                                                                         \
    { .path = "robots[].faults." #L,                                                               \
      .type = KN_CFG_SECTION,                                                                      \
      .scope = KN_CFG_SCOPE_ROBOT,                                                                 \
      .flags = KN_CFG_FAULTS,                                                                      \
      .doc = DOC },                                                                                \
        FAULT_NUMBER(L, drop, 1, "Probability that an item is lost."),                             \
        FAULT_NUMBER(L, duplicate, 1, "Probability that an item arrives twice."),                  \
        FAULT_NUMBER(L, reorder, 1,                                                                \
                     "Probability that an item is held back until the next item of its stream "    \
                     "has gone out (at most 100 ms + delay_ms + jitter_ms)."),                     \
        FAULT_NUMBER(L, delay_ms, 60000, "Delay added to every item."),                            \
        FAULT_NUMBER(L, jitter_ms, 60000,                                                          \
                     "Each delay varies uniformly by up to this much either way (never below "     \
                     "0)."),                                                                       \
    {                                                                                              \
        .path = "robots[].faults." #L ".seed", .type = KN_CFG_CUSTOM, .scope = KN_CFG_SCOPE_ROBOT, \
        .schema = "{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 9007199254740991}",        \
        .def = "0", .flags = KN_CFG_FAULTS, .hooks = &kn_config_hooks_seed_##L,                    \
        .reload = KN_CFG_RELOAD_ROBOT, .reader = "daemon/faults.c",                                \
        .doc = "Seed of the link's random sequence: the same seed and the same traffic give "      \
               "the same faults."                                                                  \
    }
/* NOLINTEND(bugprone-macro-parentheses) */

const struct kn_cfg_key kn_config_keys_robot[] = {
    { .path = "robots[].name",
      .type = KN_CFG_STRING,
      ROBOT_FIELD(name),
      .minlen = 1,
      .maxlen = 16,
      .pattern = "^[A-Za-z0-9_.-]*$",
      .flags = KN_CFG_REQUIRED,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/robot.c",
      .doc =
          "Unique robot name, also used as the simulator-side robot name (letters, digits, _ . -)." },
    { .path = "robots[].listen",
      .type = KN_CFG_CUSTOM,
      .scope = KN_CFG_SCOPE_ROBOT,
      .schema = "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 262}",
      .def = "\"127.0.0.1:9750\"",
      .hooks = &kn_config_hooks_listen,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/robot.c",
      .doc = "KRP/1 UDP address as IPv4:port or [IPv6]:port; port 0 lets the kernel choose." },
    { .path = "robots[].watchdog_ms",
      .type = KN_CFG_NUMBER,
      ROBOT_FIELD(watchdog_ms),
      .min = 50,
      .max = 10000,
      .def = "500",
      .flags = KN_CFG_RANGE,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Belts stop when no CRAWLER arrived for this long while a belt was commanded to move (a STOP or a zero CRAWLER disarms the watchdog). Also how long a plain driver keeps the robot after its last set-point." },
    { .path = "robots[].counts_per_m",
      .type = KN_CFG_INT32,
      ROBOT_FIELD(counts_per_m),
      .min = 1,
      .max = 10000000,
      .def = "4000",
      .flags = KN_CFG_RANGE,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc = "Encoder counts per metre of belt travel, reported in HELLO_ACK." },
    { .path = "robots[].battery_v",
      .type = KN_CFG_NUMBER,
      ROBOT_FIELD(battery_v),
      .min = 0,
      .max = 60,
      .def = "24.0",
      .flags = KN_CFG_RANGE,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc = "Battery voltage reported when the simulator has none." },
    { .path = "robots[].key_file",
      .type = KN_CFG_CUSTOM,
      .scope = KN_CFG_SCOPE_ROBOT,
      .schema = "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 511}",
      .def_doc = "none",
      .hooks = &kn_config_hooks_key_file,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/keyring.c",
      .doc =
          "Shared key for this robot (docs/protocol.md, Extension: shared key): a file of 64 to 128 hex digits, owned by root or the daemon's user and readable by its owner only. With it, every KRP/1 datagram must carry a valid HMAC-SHA256 trailer, is taken at most once for the life of the key whatever its source port, and only while its counter is within 30 s behind to 5 s ahead of the daemon's clock; others are dropped without answer and counted (keys.missing, keys.bad, keys.replayed, keys.too_old, keys.too_new, keys.below_floor), and every answer is signed." },
    { .path = "robots[].allow_drivers",
      .type = KN_CFG_CUSTOM,
      .scope = KN_CFG_SCOPE_ROBOT,
      .schema =
          "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 50}}",
      .def_doc = "none",
      .hooks = &kn_config_hooks_allow_drivers,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/access.c",
      .doc =
          "Source addresses that may drive this robot: IPv4 or IPv6 networks (\"10.1.2.0/24\", \"::1/128\") or single addresses (\"127.0.0.1\"). With this key or allow_observers set, a datagram from an address in neither list is dropped without answer and counted." },
    { .path = "robots[].allow_observers",
      .type = KN_CFG_CUSTOM,
      .scope = KN_CFG_SCOPE_ROBOT,
      .schema =
          "{\"type\": \"array\", \"maxItems\": 32, \"items\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 50}}",
      .def_doc = "none",
      .hooks = &kn_config_hooks_allow_observers,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/access.c",
      .doc =
          "Source addresses that may only watch this robot (HELLO, STATUS_REQ, SUBSCRIBE, WORLD_REQ, engaging the e-stop): CRAWLER, FLIPPER, STOP and an e-stop release from them are refused with ERROR NOT_ALLOWED (64) and counted. Same forms as allow_drivers." },
    { .path = "robots[].consoles",
      .type = KN_CFG_CUSTOM,
      .scope = KN_CFG_SCOPE_ROBOT,
      .schema =
          "{\"type\": \"array\", \"maxItems\": 16, \"items\": {\"type\": \"string\", \"minLength\": 1, \"maxLength\": 70}}",
      .def = "[]",
      .hooks = &kn_config_hooks_consoles,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Operator consoles: KRP/1 peers that may always drive (taking the robot over) and whose e-stop release resets every engagement. Each is an IP address with a port (IPv4:PORT, [IPv6]:PORT) or without one (every port of that address)." },
    { .path = "robots[].hello_to_drive",
      .type = KN_CFG_BOOL,
      ROBOT_FIELD(hello_to_drive),
      .def = "false",
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Refuse set-points (ERROR NOT_OWNER) from a peer that never sent HELLO, instead of letting it drive while the robot is free (nobody drives, or the plain driver sent no set-point for one watchdog_ms)." },
    { .path = "robots[].limits",
      .type = KN_CFG_SECTION,
      .scope = KN_CFG_SCOPE_ROBOT,
      .doc = "Set-point limits; commands beyond them are clamped and flagged." },
    { .path = "robots[].limits.max_speed_mm_s",
      .type = KN_CFG_INT32,
      ROBOT_FIELD(max_speed_mm_s),
      .min = 1,
      .max = 5000,
      .def = "800",
      .flags = KN_CFG_RANGE,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Belt speed limit: a faster CRAWLER set-point is clamped to it and STATUS flags CLAMPED." },
    { .path = "robots[].limits.flipper_min_deg",
      .type = KN_CFG_NUMBER,
      ROBOT_FIELD(flipper_min_cdeg),
      .min = -180,
      .max = 180,
      .def = "-119.5",
      .flags = KN_CFG_RANGE,
      .unit = KN_CFG_UNIT_DEG_CDEG,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Lowest flipper angle a FLIPPER set-point may ask for (below flipper_max_deg, compared at 0.01 degree); beyond it the set-point is clamped and flagged CLAMPED." },
    { .path = "robots[].limits.flipper_max_deg",
      .type = KN_CFG_NUMBER,
      ROBOT_FIELD(flipper_max_cdeg),
      .min = -180,
      .max = 180,
      .def = "119.5",
      .flags = KN_CFG_RANGE,
      .unit = KN_CFG_UNIT_DEG_CDEG,
      .reload = KN_CFG_RELOAD_ROBOT,
      .reader = "daemon/rules.c",
      .doc =
          "Highest flipper angle a FLIPPER set-point may ask for; beyond it the set-point is clamped and flagged CLAMPED." },
    { .path = "robots[].backend",
      .type = KN_CFG_SECTION,
      .scope = KN_CFG_SCOPE_ROBOT,
      .flags = KN_CFG_REQUIRED,
      .doc = "The simulator this robot lives in." },
    { .path = "robots[].faults", .type = KN_CFG_SECTION, .scope = KN_CFG_SCOPE_ROBOT, .flags = KN_CFG_FAULTS, .doc = "Seeded fault injection for robustness tests: drop, duplicate, reorder and delay KRP/1 datagrams (both directions) and commands toward the simulator (whole commands; the stream's framing is never touched). Everything 0 (the default): no faults. Can also be changed at run time through the stats socket." },
    FAULT_KEYS(krp, "Faults on the KRP/1 UDP link, applied to datagrams in both directions."),
    FAULT_KEYS(sim, "Faults on the simulator link, applied to commands toward the simulator."),
};
const size_t kn_config_nkeys_robot = sizeof kn_config_keys_robot / sizeof kn_config_keys_robot[0];
