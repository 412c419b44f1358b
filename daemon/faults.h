/* Seeded fault injection for robustness tests. Each robot has three
 * streams: KRP/1 datagrams in, KRP/1 datagrams out, and commands toward
 * the simulator. Every item passing a stream is dropped, duplicated, held
 * back behind the next item (reordered) or delayed, as the stream's
 * parameters (struct kn_cfg_faults) and its own random sequence decide.
 * The sequence is splitmix64, seeded per stream from the seed, and every
 * decision draws the same four numbers whatever it decides, so the same
 * seed and the same items give the same faults. Whole items only: a
 * command is never cut, so a simulator stream's framing stays intact.
 * Every fault is counted for the stats. The parameters are set from the
 * config and at run time by the stats-socket command
 * "faults ROBOT LINK key=value ..." (kn_faults_command). */
#ifndef KN_DAEMON_FAULTS_H
#define KN_DAEMON_FAULTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

#include "config.h"

/* ---- the decisions (pure) ------------------------------------------- */

struct kn_fault_rng {
    uint64_t s;
};

/* Stream k of a seed: independent sequences for the streams of a robot. */
void kn_fault_rng_seed(struct kn_fault_rng *r, uint64_t seed, unsigned stream);
uint64_t kn_fault_rng_next(struct kn_fault_rng *r); /* splitmix64 */
double kn_fault_rng_unit(struct kn_fault_rng *r);   /* [0, 1), 53 bits */

struct kn_fault_decision {
    bool drop;
    bool duplicate;
    bool reorder;
    uint64_t delay_ns;
};

/* True when any parameter is non-zero (the stream does something). */
bool kn_fault_params_active(const struct kn_cfg_faults *p);

/* The fate of the next item. Always draws four numbers. */
void kn_fault_decide(struct kn_fault_rng *r, const struct kn_cfg_faults *p,
                     struct kn_fault_decision *d);

/* ---- the streams of a robot ------------------------------------------ */

enum kn_fault_stream_id { KN_FAULT_KRP_IN = 0, KN_FAULT_KRP_OUT, KN_FAULT_SIM, KN_FAULT_NSTREAMS };

/* An item's way out of the injector: its bytes, as they were submitted. */
typedef void (*kn_fault_deliver_fn)(void *ctx, const void *item, size_t len);

struct kn_faults;

/* krp / sim: parameters of the two links (may be NULL: none). Registers
 * the robot by name for kn_faults_command. NULL when out of memory. */
struct kn_faults *kn_faults_new(uv_loop_t *loop, const char *robot, const struct kn_cfg_faults *krp,
                                const struct kn_cfg_faults *sim);
void kn_faults_set_sink(struct kn_faults *f, enum kn_fault_stream_id s, kn_fault_deliver_fn fn,
                        void *ctx);

/* Whether items of the stream must go through kn_faults_submit; when
 * false the caller delivers them itself (nothing configured, nothing
 * held back, or f is NULL). */
bool kn_faults_active(const struct kn_faults *f, enum kn_fault_stream_id s);

/* Decides the item's fate; then kn_faults_apply carries it out (the
 * split lets the caller record the decision first). */
void kn_faults_decide(struct kn_faults *f, enum kn_fault_stream_id s, struct kn_fault_decision *d);
/* Delivers the item now (once or twice), later, after the next item, or
 * never. The bytes are copied when they have to wait. */
void kn_faults_apply(struct kn_faults *f, enum kn_fault_stream_id s,
                     const struct kn_fault_decision *d, const void *item, size_t len);
/* Both in one. */
void kn_faults_submit(struct kn_faults *f, enum kn_fault_stream_id s, const void *item, size_t len);

/* "dropped", "delayed 12.3 ms, duplicated", ...; "" when nothing happens. */
void kn_fault_describe(const struct kn_fault_decision *d, char *buf, size_t len);

/* Unregisters, discards what is waiting (nothing is delivered any more)
 * and frees once the timers are closed. NULL is fine. */
void kn_faults_free(struct kn_faults *f);

/* "fault_injection": false in the config: kn_faults_command refuses this
 * robot (and counts it); the config loader already refused faults
 * sections, so nothing is injected. */
void kn_faults_set_allowed(struct kn_faults *f, bool allowed);

/* Parameters and counters of both links into obj, with "enabled" and
 * "commands_refused". */
void kn_faults_stats(const struct kn_faults *f, cJSON *obj);

/* Replaces a link's parameters (and restarts its sequences from the
 * seed). link: "krp" or "sim". */
void kn_faults_set(struct kn_faults *f, bool krp, const struct kn_cfg_faults *p);

/* The stats-socket command "faults ROBOT LINK [off | key=value ...]"
 * (keys drop, duplicate, reorder, delay_ms, jitter_ms, seed; keys not
 * given keep their value; "off" sets everything to 0). Returns the reply,
 * a malloc'd JSON text: {"ok":true,"robot":...,"link":...,"faults":{...}}
 * or {"ok":false,"error":"..."}. */
char *kn_faults_command(const char *args);

#endif
