/* kenaf-bench: shared declarations. The tool measures kenaf-simd and
 * libkenaf_sim against baselines run in the same process (socat as a relay
 * that does nothing, a minimal UDP echo, a plain function call, a raw
 * send), prints a table and writes JSON. Timing never decides the exit
 * status: only functional errors do (a process that does not start, nothing
 * received, output that does not parse). */
#ifndef KN_BENCH_H
#define KN_BENCH_H

#include <stdbool.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#define KN_BENCH_MAX_ROBOTS 1024

/* The simulator protocol the bench's sink speaks toward kenaf-simd. */
enum kn_sink_proto {
    KN_SINK_USARSIM, /* kenaf-simd's "usarsim" backend (also the engine's) */
    KN_SINK_STANDIN, /* kenaf-simd's "standin" JSON-lines backend */
    KN_SINK_KRP,     /* raw KRP/1 datagrams in a TCP stream (what socat relays) */
};

struct kn_bench_opts {
    bool quick;
    bool keep; /* keep the scratch directory */
    bool pin;  /* pin kenaf-simd and the load generator to CPUs */
    bool verbose;
    enum kn_sink_proto proto; /* sink protocol for relay and throughput */
    double rate_hz;           /* relay and round-trip rate per target */
    double relay_s;           /* relay / round-trip duration */
    int robots;               /* robots of the scaling runs */
    double rss_long_s;        /* long RSS run */
    double step_s;            /* throughput step length */
    double libcost_calls;     /* calls per library measurement */
    int coalesce_us;          /* kenaf-simd's coalesce_us (0: the default, none) */
    const char *simd;         /* kenaf-simd executable */
    const char *engine;       /* kenaf-engine executable */
    const char *socat;        /* socat executable, NULL: none found */
    const char *config_dir;   /* the source tree's config/ (engine scenarios) */
    const char *engine_base;  /* engine: a baseline kenaf-engine (another build), or NULL */
    const char *config_base;  /* its config/ (default: config_dir) */
    char scratch[128];        /* per-run scratch directory */
};

/* ---- time and samples (samples.c) ---------------------------------- */

uint64_t kn_bench_now_ns(void);
void kn_bench_sleep_until(uint64_t t_ns);
void kn_bench_sleep_ms(int ms);

/* A growing array of durations in ns. */
struct kn_bench_samples {
    uint64_t *v;
    size_t n, cap;
};
void kn_bench_samples_add(struct kn_bench_samples *s, uint64_t ns);
void kn_bench_samples_free(struct kn_bench_samples *s);

struct kn_bench_summary {
    size_t n;
    double mean_us, p50_us, p90_us, p99_us, p999_us, min_us, max_us;
};
/* Exact percentiles (nearest rank) of the samples; sorts them. */
struct kn_bench_summary kn_bench_summarize(struct kn_bench_samples *s);
/* {"n":…, "mean_us":…, "p50_us":…, …} */
cJSON *kn_bench_summary_json(const struct kn_bench_summary *s);

/* ---- report (report.c) -------------------------------------------- */

enum kn_bench_cmp { KN_BENCH_LE, KN_BENCH_GE };

/* One line of the printed table. ours/base NAN = not measured; the ratio
 * is ours/base when both are there. */
void kn_bench_row(const char *item, const char *metric, double ours, const char *base_name,
                  double base);
/* A row with a target: prints it with pass/FAIL, and appends
 * {"metric","value","op","limit","pass"} to the targets array. */
bool kn_bench_row_target(cJSON *targets, const char *item, const char *metric, double ours,
                         const char *base_name, double base, enum kn_bench_cmp op, double limit,
                         const char *unit);
/* A target on a value not in its own row (e.g. a ratio). */
bool kn_bench_target(cJSON *targets, const char *item, const char *metric, double value,
                     enum kn_bench_cmp op, double limit);
void kn_bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kn_bench_table_print(FILE *f);
cJSON *kn_bench_machine_json(void);
void kn_bench_machine_print(FILE *f, const char *mode);

/* ---- processes (procs.c) ------------------------------------------ */

struct kn_bench_proc {
    pid_t pid;
    char log[256]; /* stdout and stderr */
    int status;
    bool reaped;
};

/* Starts argv[0] with stdout to log and stderr to err_log (NULL: log too);
 * cpu >= 0 pins it there. The child is killed when the bench dies. */
int kn_bench_spawn(struct kn_bench_proc *p, char *const argv[], const char *log,
                   const char *err_log, int cpu);
/* SIGTERM, then SIGKILL after grace_ms; returns the wait status. */
int kn_bench_stop(struct kn_bench_proc *p, int grace_ms);
/* true once exited (reaped; status in p->status). */
bool kn_bench_exited(struct kn_bench_proc *p);
/* Waits for exit up to timeout_ms; -1 if still running. */
int kn_bench_wait(struct kn_bench_proc *p, int timeout_ms);
long kn_bench_rss_kib(pid_t pid, const char *field); /* "VmRSS:", "VmHWM:"; -1 unknown */
double kn_bench_cpu_s(pid_t pid);                    /* user + system, -1 unknown */
/* Time the main thread spent runnable but waiting for a CPU (schedstat):
 * on a shared machine, how much of its core it did not get. -1 unknown. */
double kn_bench_wait_s(pid_t pid);
/* The first that exists of: explicit, the build-tree path, next to this
 * executable, PATH. NULL if none. */
const char *kn_bench_find_exe(const char *explicit_path, const char *build_path, const char *name);
int kn_bench_free_udp_port(void);
void kn_bench_pin_self(int cpu);
/* The calling thread on every CPU but cpu (-1: every CPU). */
void kn_bench_pin_except(int cpu);
int kn_bench_ncpu(void);
/* The tail of a log file, for error messages (static buffer). */
const char *kn_bench_log_tail(const char *path);

/* ---- kenaf-simd under test (simd.c) -------------------------------- */

struct kn_simd {
    struct kn_bench_proc proc;
    char cfg[256], sock[256], log[256];
    int nrobots;
    int port[KN_BENCH_MAX_ROBOTS]; /* KRP/1 UDP ports */
};

/* Writes a config of n robots (names r0…) whose simulator is the sink at
 * sink_port speaking proto, starts kenaf-simd (pinned to cpu if >= 0),
 * waits until every robot's link is up and reads the UDP ports. */
int kn_simd_start(struct kn_simd *d, const struct kn_bench_opts *o, const char *tag, int n,
                  enum kn_sink_proto proto, int sink_port, int cpu, char *err, size_t errlen);
/* The same, with robot key_robot (-1: none) signing with the key in
 * key_file (docs/protocol.md, shared key). */
int kn_simd_start_keyed(struct kn_simd *d, const struct kn_bench_opts *o, const char *tag, int n,
                        enum kn_sink_proto proto, int sink_port, int cpu, int key_robot,
                        const char *key_file, char *err, size_t errlen);
void kn_simd_stop(struct kn_simd *d);
cJSON *kn_simd_stats(struct kn_simd *d); /* caller deletes; NULL on failure */
/* Sum over robots of a number at a dotted path below each robot object
 * ("datagrams_in.CRAWLER"); NAN when missing. */
double kn_bench_stats_sum(const cJSON *stats, const char *path);
const cJSON *kn_bench_json_path(const cJSON *o, const char *path);

/* ---- the sink simulator (sink.c) ----------------------------------- */

/* Called on the sink's thread for each command: robot index, decoded id,
 * time the bytes were read. */
typedef void (*kn_sink_fn)(void *ctx, int robot, uint32_t id, uint64_t t_ns);

struct kn_sink;
struct kn_sink *kn_sink_start(enum kn_sink_proto proto, kn_sink_fn fn, void *ctx, char *err,
                              size_t errlen);
int kn_sink_port(const struct kn_sink *s);
int kn_sink_conns(struct kn_sink *s);         /* connections accepted so far */
void kn_sink_pin(struct kn_sink *s, int cpu); /* its thread on one CPU (-1: no-op) */
uint64_t kn_sink_unparsed(struct kn_sink *s); /* lines/frames not understood */
void kn_sink_stop(struct kn_sink *s);         /* joins the thread, frees */

/* ---- the command id carried in belt speeds ------------------------- */

/* Every CRAWLER of a run carries a unique (left, right) pair within
 * ±5000 mm/s, never (0, 0), so the command line it becomes can be matched
 * to it; kenaf-simd runs with max_speed_mm_s 5000 so nothing is clamped. */
#define KN_BENCH_ID_MAX (5000u * 10001u)
static inline void kn_bench_id_encode(uint32_t id, int32_t *l, int32_t *r)
{
    *l = (int32_t)(id % 5000u) + 1;
    *r = (int32_t)((id / 5000u) % 10001u) - 5000;
}
static inline bool kn_bench_id_decode(long l, long r, uint32_t *id)
{
    if (l < 1 || l > 5000 || r < -5000 || r > 5000)
        return false;
    *id = (uint32_t)(l - 1) + 5000u * (uint32_t)(r + 5000);
    return true;
}

/* ---- load generator (loadgen.c) ------------------------------------ */

/* CRAWLER + ACK_REQ to n robots round-robin from one UDP socket (sendmmsg),
 * a thread counting the answers, and the sink counting what was relayed;
 * or CRAWLER as libkenaf.so.1 sends it, without ACK_REQ (kn_gen_ack). */
struct kn_gen;
/* A sink callback that only counts: ctx is an atomic_uint_fast64_t. */
void kn_sink_count(void *ctx, int robot, uint32_t id, uint64_t t_ns);
/* relayed: the counter the sink increments (kn_sink_count). */
struct kn_gen *kn_gen_new(const struct kn_simd *d, atomic_uint_fast64_t *relayed, char *err,
                          size_t errlen);
/* To n UDP ports on loopback (a baseline relay's). */
struct kn_gen *kn_gen_new_ports(const int *ports, int n, atomic_uint_fast64_t *relayed, char *err,
                                size_t errlen);
void kn_gen_free(struct kn_gen *g);
/* With ACK_REQ on every CRAWLER (the default) or without, as a controller
 * on libkenaf.so.1 sends them: then no ACK is expected, and one counted by
 * kenaf-simd is a loss of the step. */
void kn_gen_ack(struct kn_gen *g, bool ack_req);

struct kn_step {
    double rate_target, rate_sent, seconds;
    uint64_t sent;      /* datagrams the generator sent */
    double in, acked;   /* kenaf-simd's counters: CRAWLER in, ACK out */
    uint64_t relayed;   /* commands the sink read */
    double coalesced;   /* kenaf-simd: commands merged behind a full socket */
    uint64_t acks_seen; /* ACKs the generator read */
    double cpu_util;    /* kenaf-simd CPU time / wall time */
    double wait_util;   /* time kenaf-simd waited for its CPU / wall time */
    double cpu_us_per_dgram;
    /* after the window: time until everything was relayed and answered
     * (NAN: never, within the settle time) */
    double drain_ms;
    /* zero_loss: every datagram counted, answered and relayed in the end;
     * sustained: also by KN_GEN_GRACE_MS after the window, so socket
     * buffers did not carry the step */
    bool zero_loss, sustained, generator_limited, stats_ok;
};
#define KN_GEN_GRACE_MS 100
/* Sends at rate (datagrams/s over all robots) for seconds, waits for the
 * answers and relayed commands to settle, reads kenaf-simd's counters
 * before and after. */
void kn_gen_step(struct kn_gen *g, struct kn_simd *d, double rate, double seconds,
                 struct kn_step *out);
/* The same toward a relay that is not kenaf-simd (d NULL: no counters, no
 * ACKs expected): CPU is the sum over pids. */
void kn_gen_step_pids(struct kn_gen *g, struct kn_simd *d, const pid_t *pids, int npids,
                      double rate, double seconds, struct kn_step *out);
cJSON *kn_gen_step_json(const struct kn_step *s);

/* ---- benchmarks ---------------------------------------------------- */

/* Each adds its object to root and rows to the table; returns 0, or -1 on
 * a functional error (message on stderr). */
int kn_bench_relay(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_rtt(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_throughput(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_rss_long(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_libcost(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_engine(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_keycost(const struct kn_bench_opts *o, cJSON *root);
int kn_bench_lockstep(const struct kn_bench_opts *o, cJSON *root);

const char *kn_sink_proto_name(enum kn_sink_proto p);

#endif
