/* The "engine" backend: the built-in kenaf-engine, which speaks the
 * USARSim protocol, so the USARSim client (backend_usarsim.h) does the
 * talking. With backend.address set it connects there; without, kenaf-simd
 * spawns kenaf-engine itself (engine_proc.c): one engine process per
 * (executable, terrain, robot), shared by every robot configured with the
 * same three (several robots in one world), started with --listen
 * 127.0.0.1:0 --terrain FILE --robot FILE --stdin-watch (the files
 * resolved by engine_files.h; STA, GroundTruth and Encoder at 50 Hz), its
 * port read from its "PORT n" line, its stderr passed on, restarted with
 * back-off when it dies (slowing to one try a minute while it keeps
 * failing at start-up) or when it stays silent for silent_restart_s,
 * stopped with SIGTERM (SIGKILL after a deadline) when its last robot goes.
 * Only kenaf-simd may spawn robots in it or send it KENAF commands: it
 * gets a random token in KENAF_ENGINE_TOKEN (--auth-token-env), which each
 * robot connection sends first (KENAF {Cmd Auth}). */
#ifndef KN_ENGINE_PROC_H
#define KN_ENGINE_PROC_H

#include <stddef.h>

struct kn_backend_ops;
extern const struct kn_backend_ops kn_backend_engine;

#define KN_ENGINE_EXE "kenaf-engine"
#define KN_ENGINE_START_TIMEOUT_S 15.0 /* no PORT line by then: kill, retry */
#define KN_ENGINE_STOP_DEADLINE_S 3.0  /* SIGTERM, then SIGKILL after this */
#define KN_ENGINE_BACKOFF_FIRST_S 0.2
#define KN_ENGINE_BACKOFF_MAX_S 5.0
#define KN_ENGINE_FAIL_BACKOFF_MAX_S 60.0 /* cap while it fails before listening */
#define KN_ENGINE_STABLE_S 10.0           /* ran this long: the next restart is quick again */
#define KN_ENGINE_SILENT_RESTART_S 3.0    /* backend.engine.silent_restart_s default */
#define KN_ENGINE_TOKEN_ENV "KENAF_ENGINE_TOKEN" /* --auth-token-env of a spawned engine */
#define KN_ENGINE_TOKEN_BYTES 32                 /* random bytes per spawn, sent as hex */

/* The executable to spawn for a configured engine.path: the path itself
 * when set (a bare name is looked up in PATH); else kenaf-engine next to
 * this kenaf-simd (/proc/self/exe: an install), then ../engine/ from it (a
 * build tree), then the build tree this kenaf-simd was built in, then
 * PATH. 0 with the path in out, or -1 with the places looked at in why. */
int kn_engine_resolve(const char *configured, char *out, size_t outlen, char *why, size_t whylen);

/* The terrain and robot files the engine of this robot's link was started
 * with (for its world description, world_doc.h); each NULL when the engine
 * is not one kenaf-simd spawned, or that file is not resolved yet. */
struct kn_link;
void kn_engine_world_files(struct kn_link *l, const char **terrain_file, const char **robot_file);

#endif
