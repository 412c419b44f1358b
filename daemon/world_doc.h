/* The world description a robot answers WORLD_REQ with (KRP/1 world
 * extension, docs/protocol.md): one JSON document naming the backend, the
 * robot file the simulator runs and the terrain file it loaded, built from
 * what the daemon's backend knows (a spawned engine's files; an engine at
 * an address's World answer; for the other backends the default Kenaf
 * robot file and no terrain). The
 * terrain is read with the engine's own loader, so the document carries
 * what the engine read and built from it too: a heightfield's samples
 * ("heights") and the primitives ("parts") the engine collides with.
 *
 * The document is deterministic: "generation" is a hash of the rest, so
 * it changes exactly when the world does, across daemon restarts too. */
#ifndef KN_WORLD_DOC_H
#define KN_WORLD_DOC_H

#include <stddef.h>
#include <stdint.h>

/* Longest document built; a heightfield that would make it longer goes
 * out without its samples ("heights": null). */
#define KN_WORLDDOC_MAX (4u << 20)

/* The document for backend (its config name: "engine", "usarsim", ...).
 * robot_file NULL: the default Kenaf robot (robots/kenaf.json in the
 * engine's data folder, engine_files.h); terrain_file NULL: "terrain":
 * null. A file that cannot be read becomes null and its reason goes into
 * note (else note is ""). Returns the NUL-terminated text (free()) with
 * its length in *len, or NULL when out of memory. */
char *kn_worlddoc_build(const char *backend, const char *robot_file, const char *terrain_file,
                        size_t *len, char *note, size_t notelen);

/* The document of an engine reached at an address, from its World answer
 * (usarsim_world.h: {"terrain": {...}, "robot": {...}}, what the engine
 * runs, a scenario's variant included), checked with the engine's own
 * loaders as a file would be. An answer that is not such JSON, or that
 * the loaders refuse, leaves that part null (the default robot, no
 * terrain) with the reason in note. Returns as kn_worlddoc_build. */
char *kn_worlddoc_from_engine(const char *backend, const char *answer, size_t *len, char *note,
                              size_t notelen);

/* The 32-bit FNV-1a hash the generation is made of. */
uint32_t kn_worlddoc_hash(const char *s, size_t len);

#endif
