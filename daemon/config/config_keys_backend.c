/* The descriptions of the keys of a robot's backend section
 * (config_keys.h), in output order. */
#include <stddef.h>

#include "config_keys.h"
#include "config_priv.h"

static const char *const gz_family_names[] = { "auto", "ignition", "gz" };
static const char *const dialect_names[] = { "udk", "ut2004" };
static const char *const command_names[] = { "twist", "pose" };

/* The tracked-vehicle plugin's two parameters, as section S of backend
 * KIND names them (both fill the same fields). */
#define TRACKED_KEYS(S, KIND, WHOSE)                                                  \
    { .path = "robots[].backend." #S ".tracks_separation_m",                          \
      .type = KN_CFG_NUMBER,                                                          \
      BACKEND_FIELD(tracks_separation_m),                                             \
      .min = 0,                                                                       \
      .max = 10,                                                                      \
      .def = "0.23",                                                                  \
      .flags = KN_CFG_RANGE | KN_CFG_EXCL_MIN,                                        \
      .backends = KN_CFG_BK(KIND),                                                    \
      .reload = KN_CFG_RELOAD_ROBOT,                                                  \
      .reader = "protocols/convert.c",                                                \
      .doc = WHOSE " tracks_separation." },                                           \
    {                                                                                 \
        .path = "robots[].backend." #S ".steering_efficiency", .type = KN_CFG_NUMBER, \
        BACKEND_FIELD(steering_efficiency), .min = 0, .max = 1, .def = "0.5",         \
        .flags = KN_CFG_RANGE | KN_CFG_EXCL_MIN, .backends = KN_CFG_BK(KIND),         \
        .reload = KN_CFG_RELOAD_ROBOT, .reader = "protocols/convert.c",               \
        .doc = WHOSE " steering_efficiency."                                          \
    }

/* One flipper's keys: its section F (FL, FR, RL, RR) and the mapping of
 * flipper[I] onto its simulator joint; the defaults are the USARSim Kenaf's
 * joint names and signs. */
#define FLIPPER_KEYS(F, I, WHICH, SIGN)                                                            \
    { .path = "robots[].backend.flippers." #F,                                                     \
      .type = KN_CFG_SECTION,                                                                      \
      .scope = KN_CFG_SCOPE_BACKEND,                                                               \
      .doc = "The " WHICH " flipper." },                                                           \
        { .path = "robots[].backend.flippers." #F ".joint",                                        \
          .type = KN_CFG_STRING,                                                                   \
          BACKEND_FIELD(flipper[I].name),                                                          \
          .minlen = 1,                                                                             \
          .maxlen = 63,                                                                            \
          .pattern = "^[A-Za-z0-9_.:/-]*$",                                                        \
          .def = "\"" #F "Flipper\"",                                                              \
          .reload = KN_CFG_RELOAD_ROBOT,                                                           \
          .reader = "daemon/backends",                                                             \
          .doc = "The simulator joint that moves this flipper (the USARSim Kenaf joints by "       \
                 "default)." },                                                                    \
        { .path = "robots[].backend.flippers." #F ".link",                                         \
          .type = KN_CFG_STRING,                                                                   \
          BACKEND_FIELD(flipper[I].link),                                                          \
          .minlen = 1,                                                                             \
          .maxlen = 63,                                                                            \
          .pattern = "^[A-Za-z0-9_.:/-]*$",                                                        \
          .def_doc = "from the joint name",                                                        \
          .flags = KN_CFG_OMIT_EMPTY,                                                              \
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),                                                \
          .reload = KN_CFG_RELOAD_ROBOT,                                                           \
          .reader = "daemon/backends/gazebo",                                                      \
          .doc = "gazebo only: the flipper's link in ~/pose/info (model:: added unless scoped); "  \
                 "left out: the joint name without a trailing _joint, _jnt, _j, Joint or _hinge, " \
                 "then the joint name itself." },                                                  \
        { .path = "robots[].backend.flippers." #F ".sign",                                         \
          .type = KN_CFG_NUMBER,                                                                   \
          BACKEND_FIELD(flipper[I].sign),                                                          \
          .def = #SIGN,                                                                            \
          .flags = KN_CFG_SIGN,                                                                    \
          .reload = KN_CFG_RELOAD_ROBOT,                                                           \
          .reader = "protocols/convert.c",                                                         \
          .doc = "Joint angle = sign * KRP/1 angle + offset_deg: -1 for a joint that turns the "   \
                 "other way (the USARSim Kenaf front joints)." },                                  \
    {                                                                                              \
        .path = "robots[].backend.flippers." #F ".offset_deg", .type = KN_CFG_NUMBER,              \
        BACKEND_FIELD(flipper[I].offset_rad), .min = -360, .max = 360, .def = "0",                 \
        .flags = KN_CFG_RANGE, .unit = KN_CFG_UNIT_DEG_RAD, .reload = KN_CFG_RELOAD_ROBOT,         \
        .reader = "protocols/convert.c",                                                           \
        .doc = "The joint angle, in degrees, at the flipper's KRP/1 zero (in line with the "       \
               "belts)."                                                                           \
    }

const struct kn_cfg_key
    kn_config_keys_backend[] = {
        { .path = "robots[].backend.type",
          .type = KN_CFG_CUSTOM,
          .scope = KN_CFG_SCOPE_BACKEND,
          .schema = "{\"enum\": [\"engine\", \"usarsim\", \"gazebo\", \"standin\", \"gz\"]}",
          .flags = KN_CFG_REQUIRED,
          .hooks = &kn_config_hooks_backend_type,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/backend.c",
          .doc =
              "engine: the built-in kenaf-engine; usarsim: USARSim (UDK or UT2004); gazebo: Gazebo classic; standin: the test stand-in; gz: modern Gazebo (gz-sim Fortress and later) over gz-transport, found by discovery (no address)." },
        { .path = "robots[].backend.address",
          .type = KN_CFG_CUSTOM,
          .scope = KN_CFG_SCOPE_BACKEND,
          .schema = "{\"type\": \"string\", \"minLength\": 1, \"maxLength\": 262}",
          .def_doc = "by type, see the text",
          .hooks = &kn_config_hooks_address,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/link.c",
          .doc =
              "Simulator TCP address as host:port or [IPv6]:port; the port may be left out (usarsim and engine 3000, gazebo 11345). engine without address: kenaf-simd spawns the engine. usarsim and gazebo default to 127.0.0.1; standin needs it." },
        { .path = "robots[].backend.connect_timeout_s",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(connect_timeout_s),
          .min = 0,
          .max = 60,
          .def = "1.0",
          .flags = KN_CFG_RANGE | KN_CFG_EXCL_MIN,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/link.c",
          .doc = "Time allowed for one connection attempt." },
        { .path = "robots[].backend.reconnect_max_s",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(reconnect_max_s),
          .min = 0.05,
          .max = 1.0,
          .def = "1.0",
          .flags = KN_CFG_RANGE,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/link.c",
          .doc = "Cap of the reconnect back-off." },
        { .path = "robots[].backend.stale_ms",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(stale_ms),
          .min = 10,
          .max = 60000,
          .def = "500",
          .flags = KN_CFG_RANGE,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/link.c",
          .doc = "Sensor data older than this sets the STALE flag; for gazebo keep it above 200." },
        { .path = "robots[].backend.wheel_radius_m",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(wheel_radius_m),
          .min = 0,
          .max = 1,
          .def = "0.08",
          .flags = KN_CFG_RANGE | KN_CFG_EXCL_MIN,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "protocols/convert.c",
          .doc =
              "Sprocket radius: belt speed / radius = wheel spin speed sent to the simulator (usarsim and engine)." },
        { .path = "robots[].backend.counts_per_tick",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(counts_per_tick),
          .min = 0,
          .max = 1000000,
          .def = "1.0",
          .flags = KN_CFG_RANGE | KN_CFG_EXCL_MIN,
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "protocols/convert.c",
          .doc = "KRP/1 encoder counts per simulator encoder tick (usarsim and engine)." },
        { .path = "robots[].backend.lockstep",
          .type = KN_CFG_CUSTOM,
          .scope = KN_CFG_SCOPE_BACKEND,
          .schema = "{\"type\": \"boolean\"}",
          .def = "false",
          .hooks = &kn_config_hooks_lockstep,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/engine_proc.c",
          .doc =
              "Built-in engine only: robot time passes only when the driving client asks with KRP/1 STEP (HELLO_ACK capability bit 2); the engine runs with --pace step, the belt watchdog and the silence checks are off. For repeatable test runs (kenaf-sim-run --scenario)." },
        { .path = "robots[].backend.flippers",
          .type = KN_CFG_SECTION,
          .scope = KN_CFG_SCOPE_BACKEND,
          .doc =
              "Mapping of each KRP/1 flipper onto a simulator joint: joint angle = sign * KRP angle + offset. Defaults follow the USARSim Kenaf, whose front joints turn the opposite way from the rear ones." },
        FLIPPER_KEYS(FL, 0, "front left", -1),
        FLIPPER_KEYS(FR, 1, "front right", -1),
        FLIPPER_KEYS(RL, 2, "rear left", 1),
        FLIPPER_KEYS(RR, 3, "rear right", 1),
        { .path = "robots[].backend.usarsim",
          .type = KN_CFG_SECTION,
          .scope = KN_CFG_SCOPE_BACKEND,
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .doc = "For usarsim and engine backends (the engine speaks the USARSim protocol)." },
        { .path = "robots[].backend.usarsim.dialect",
          .type = KN_CFG_ENUM,
          BACKEND_FIELD(dialect),
          .def = "\"udk\"",
          .names = dialect_names,
          .n_names = 2,
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc = "udk: flippers by SET {Type Joint}; ut2004: by MULTIDRIVE." },
        { .path = "robots[].backend.usarsim.class_name",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(class_name),
          .minlen = 1,
          .maxlen = 63,
          .pattern = "^[A-Za-z0-9_.]*$",
          .def = "\"USARBot.Kenaf\"",
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc = "The robot class INIT spawns." },
        { .path = "robots[].backend.usarsim.start",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(start_tag),
          .maxlen = 63,
          .pattern = "^[A-Za-z0-9_.-]*$",
          .def = "\"\"",
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc =
              "Spawn at this PlayerStart tag; when set it wins over location_m and rotation_deg." },
        { .path = "robots[].backend.usarsim.location_m",
          .type = KN_CFG_VEC,
          BACKEND_FIELD(spawn_location_m),
          .min = -100000,
          .max = 100000,
          .def = "[0, 0, 0]",
          .flags = KN_CFG_RANGE,
          .vec_n = 3,
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc = "Spawn position x, y, z in the KRP/1 world frame (z up), metres." },
        { .path = "robots[].backend.usarsim.rotation_deg",
          .type = KN_CFG_VEC,
          BACKEND_FIELD(spawn_rpy_rad),
          .min = -360,
          .max = 360,
          .def = "[0, 0, 0]",
          .flags = KN_CFG_RANGE,
          .vec_n = 3,
          .unit = KN_CFG_UNIT_DEG_RAD,
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc = "Spawn roll, pitch, yaw in the KRP/1 world frame, degrees." },
        { .path = "robots[].backend.usarsim.encoder_sign",
          .type = KN_CFG_VEC,
          BACKEND_FIELD(encoder_sign),
          .def = "[1, 1]",
          .flags = KN_CFG_SIGN,
          .vec_n = 2,
          .backends = KN_CFG_BK(KN_BACKEND_USARSIM) | KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/usarsim",
          .doc =
              "[L, R]: -1 for a side whose encoder ticks fall while its belt runs forward (an encoder mounted mirrored; USARSim counts ticks clockwise)." },
        { .path = "robots[].backend.engine",
          .type = KN_CFG_SECTION,
          .scope = KN_CFG_SCOPE_BACKEND,
          .flags = KN_CFG_SPAWNED,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .doc = "For the engine backend when kenaf-simd spawns the engine (no address)." },
        { .path = "robots[].backend.engine.path",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(engine_path),
          .maxlen = 511,
          .def = "\"\"",
          .flags = KN_CFG_SPAWNED,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/engine_files.c",
          .doc =
              "kenaf-engine executable; empty: next to kenaf-simd, then the build tree kenaf-simd was built in, then PATH." },
        { .path = "robots[].backend.engine.terrain",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(terrain),
          .minlen = 1,
          .maxlen = 511,
          .def = "\"flat\"",
          .flags = KN_CFG_SPAWNED,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/engine_files.c",
          .doc =
              "Terrain name (a file NAME.json in the engine's terrains folder, such as flat, step, stairs, ramp, rough, rubble) or a terrain file (a path with '/' or ending in .json, relative to the working directory); one that does not load is a config error." },
        { .path = "robots[].backend.engine.robot",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(robot),
          .minlen = 1,
          .maxlen = 511,
          .def = "\"kenaf\"",
          .flags = KN_CFG_SPAWNED,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/engine_files.c",
          .doc =
              "Robot name (a file NAME.json in the engine's robots folder) or a robot file (a path with '/' or ending in .json, relative to the working directory)." },
        { .path = "robots[].backend.engine.silent_restart_s",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(silent_restart_s),
          .min = 0.5,
          .max = 600,
          .def = "3.0",
          .flags = KN_CFG_SPAWNED | KN_CFG_RANGE,
          .backends = KN_CFG_BK(KN_BACKEND_ENGINE),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/engine_proc.c",
          .doc =
              "A spawned engine that says nothing for this long, no heartbeat and no line to any of its robots (hung, stopped), is killed and restarted, its robots re-spawned at their last poses. A silent link while the heartbeat comes (a network cut) or a stall of kenaf-simd itself restarts nothing. Robots sharing one engine: the shortest of their values." },
        { .path = "robots[].backend.gazebo",
          .type = KN_CFG_SECTION,
          .scope = KN_CFG_SCOPE_BACKEND,
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),
          .doc = "For the gazebo backend." },
        { .path = "robots[].backend.gazebo.model",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(model),
          .minlen = 1,
          .maxlen = 63,
          .pattern = "^[A-Za-z0-9_.:/-]*$",
          .def = "\"kenaf\"",
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gazebo",
          .doc = "The model's name in the world." },
        { .path = "robots[].backend.gazebo.command",
          .type = KN_CFG_CUSTOM,
          .scope = KN_CFG_SCOPE_BACKEND,
          .schema = "{}",
          .def = "\"twist\"",
          .hooks = &kn_config_hooks_command,
          .names = command_names,
          .n_names = 2,
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gazebo",
          .doc = "twist: cmd_vel_twist (Twist); pose: cmd_vel (Pose)." },
        TRACKED_KEYS(gazebo, KN_BACKEND_GAZEBO, "The tracked-vehicle plugin's"),
        { .path = "robots[].backend.gazebo.max_linear_speed_m_s",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(max_linear_speed_m_s),
          .min = 0.001,
          .max = 10,
          .def = "1.0",
          .flags = KN_CFG_RANGE,
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "protocols/convert.c",
          .doc =
              "The plugin's max_linear_speed. The plugin clamps speed and turn rate separately, which bends the path; kenaf-simd scales both belts by one factor to fit instead, so the robot follows the commanded curve, slower." },
        { .path = "robots[].backend.gazebo.max_angular_speed_rad_s",
          .type = KN_CFG_NUMBER,
          BACKEND_FIELD(max_angular_speed_rad_s),
          .min = 0.001,
          .max = 100,
          .def = "1.0",
          .flags = KN_CFG_RANGE,
          .backends = KN_CFG_BK(KN_BACKEND_GAZEBO),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "protocols/convert.c",
          .doc = "The plugin's max_angular_speed (see max_linear_speed_m_s)." },
        { .path = "robots[].backend.gz",
          .type = KN_CFG_SECTION,
          .scope = KN_CFG_SCOPE_BACKEND,
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .doc =
              "For the gz backend (gz-transport: discovery on UDP multicast 239.255.0.7 ports 10317 and 10318, messages over ZeroMQ)." },
        { .path = "robots[].backend.gz.model",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(model),
          .minlen = 1,
          .maxlen = 63,
          .pattern = "^[A-Za-z0-9_.-]*$",
          .def = "\"kenaf\"",
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc =
              "The model's name: /model/<model>/cmd_vel, /model/<model>/joint/<joint>/0/cmd_pos, /world/<world>/model/<model>/joint_state." },
        { .path = "robots[].backend.gz.world",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(world),
          .minlen = 1,
          .maxlen = 127,
          .pattern = "^[A-Za-z0-9_.-]*$",
          .def = "\"default\"",
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc =
              "The world's name: /world/<world>/clock, /world/<world>/pose/info, the /world/<world>/control service." },
        { .path = "robots[].backend.gz.partition",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(partition),
          .maxlen = 127,
          .pattern = "^[A-Za-z0-9_.:/-]*$",
          .def = "\"\"",
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc = "gz-transport partition; empty: GZ_PARTITION, then IGN_PARTITION from kenaf-simd's environment, else the library's default <hostname>:<user>." },
        { .path = "robots[].backend.gz.ip",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(gz_ip),
          .maxlen = 63,
          .pattern = "^[0-9.]*$",
          .def = "\"\"",
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc =
              "IPv4 address to bind and announce; empty: GZ_IP, then IGN_IP, else the address of the interface the default route uses (127.0.0.1 without one)." },
        { .path = "robots[].backend.gz.messages",
          .type = KN_CFG_ENUM,
          BACKEND_FIELD(gz_family),
          .def = "\"auto\"",
          .names = gz_family_names,
          .n_names = 3,
          .bias = -1,
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc =
              "Message type names: ignition (ignition.msgs.*, Fortress), gz (gz.msgs.*, Garden and later), auto: as the world's clock is advertised." },
        { .path = "robots[].backend.gz.pose_topic",
          .type = KN_CFG_STRING,
          BACKEND_FIELD(pose_topic),
          .maxlen = 127,
          .pattern = "^(/[A-Za-z0-9_.:/-]*)?$",
          .def = "\"\"",
          .backends = KN_CFG_BK(KN_BACKEND_GZ),
          .reload = KN_CFG_RELOAD_ROBOT,
          .reader = "daemon/backends/gz",
          .doc =
              "Where the model's pose comes from: empty for /world/<world>/pose/info (Pose_V), or a PosePublisher topic such as /model/kenaf/pose (Pose or Pose_V, as advertised)." },
        TRACKED_KEYS(gz, KN_BACKEND_GZ, "TrackedVehicle's"),
    };
const size_t kn_config_nkeys_backend =
    sizeof kn_config_keys_backend / sizeof kn_config_keys_backend[0];
