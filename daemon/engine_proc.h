/* The "engine" backend: the built-in kenaf-engine, which speaks the
 * USARSim protocol, so the USARSim client (backend_usarsim.h) does the
 * talking. With backend.address set it connects there; without, kenaf-simd
 * spawns kenaf-engine itself (engine_proc.c): one engine process per
 * (executable, terrain) pair, shared by every robot configured with that
 * pair (several robots in one world), started with --listen 127.0.0.1:0
 * --terrain T --stdin-watch (and STA, GroundTruth and Encoder at 50 Hz),
 * its port read from its "PORT n" line,
 * restarted with back-off when it dies, stopped with SIGTERM (SIGKILL
 * after a deadline) when its last robot goes. */
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
#define KN_ENGINE_STABLE_S 10.0        /* ran this long: the next restart is quick again */

/* The executable to spawn for a configured engine.path: the path itself
 * when set; else kenaf-engine next to this kenaf-simd (/proc/self/exe),
 * then the one in the build tree this kenaf-simd came from, then the bare
 * name (looked up in PATH at spawn). Returns out. */
const char *kn_engine_resolve(const char *configured, char *out, size_t outlen);

#endif
