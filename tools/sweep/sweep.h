/* A sweep: many cases of one scenario with parameters
 * (docs/scenario-runs.md, "Sweeps"). The sweep file's parser and its
 * expansion into cases are sans-I/O: a buffer in, a case list out; what
 * reads files, runs cases and writes results is in the other files of
 * tools/sweep/. Prefix kn_sweep_. */
#ifndef KN_SWEEP_H
#define KN_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#define KN_SWEEP_MAX_PARAMS 16
/* a list or range holds at most this many values, a sweep this many cases */
#define KN_SWEEP_MAX_VALUES 100000
#define KN_SWEEP_MAX_CASES_LIMIT 100000
#define KN_SWEEP_DEFAULT_MAX_CASES 10000
#define KN_SWEEP_STR_MAX 32
#define KN_SWEEP_ID_LEN 10

/* A known parameter (params.c): what it changes is in casefile.c. */
struct kn_sweep_known {
    const char *name;
    const char *unit; /* "" when it has none */
    const char *fits; /* terrain type it fits; NULL any; "family" the generated ones */
    int harder;       /* +1 higher, -1 lower, 0 none: the default direction */
    int is_string;    /* values are strings (terrain_family) */
    int is_integer;   /* values are integers (seed, terrain_seed) */
};

struct kn_sweep_param {
    const struct kn_sweep_known *known;
    int harder;     /* +1, -1, 0 */
    int uniform;    /* {"uniform": [lo, hi]}: drawn per case */
    double lo, hi;  /* uniform's bounds */
    double *values; /* discrete values (numbers, or indices into strs) */
    char (*strs)[KN_SWEEP_STR_MAX];
    size_t nvalues;
};

struct kn_sweep_case {
    char id[KN_SWEEP_ID_LEN + 1];
    double v[KN_SWEEP_MAX_PARAMS]; /* per parameter: the number, or the string's index */
};

struct kn_sweep {
    char name[64];
    char scenario[1024]; /* as written in the file (relative to it), without #VARIANT */
    int variant;
    struct kn_sweep_param params[KN_SWEEP_MAX_PARAMS];
    int nparams;
    int has_sample;
    long sample_cases;
    uint64_t sample_seed;
    long max_cases;
    double target_rate;
    struct kn_sweep_case *cases;
    size_t ncases;
};

/* The known parameters, by name (NULL when unknown). */
const struct kn_sweep_known *kn_sweep_known_find(const char *name);
/* The comma-separated list of known names, for messages. */
const char *kn_sweep_known_list(void);

/* Parses a sweep file's bytes into sw (zeroed first; kn_sweep_free it
 * after, also on failure). No cases yet. 0, or -1 with a one-line reason
 * in err. */
int kn_sweep_parse(const char *buf, size_t len, struct kn_sweep *sw, char *err, size_t errlen);
/* Checks that every parameter fits the scenario's terrain type (its
 * "type", e.g. "step"). 0, or -1 with the reason. */
int kn_sweep_check_terrain(const struct kn_sweep *sw, const char *terrain_type, char *err,
                           size_t errlen);
/* Replaces the file's sample by `cases` draws (seed kept, 1 if none). */
void kn_sweep_set_sample(struct kn_sweep *sw, long cases);
/* Expands the parameters into cases (the product, or the sample), with
 * their ids. 0, or -1 with the reason (too many cases, an id collision). */
int kn_sweep_expand(struct kn_sweep *sw, char *err, size_t errlen);
void kn_sweep_free(struct kn_sweep *sw);

/* ---- ids (caseid.c) ---- */

#define KN_SWEEP_FNV_INIT 0xcbf29ce484222325ull
uint64_t kn_sweep_fnv(uint64_t h, const void *data, size_t len);
/* The number as the canonical string prints it (rounded to 1e-9). */
double kn_sweep_round9(double v);
/* One parameter's value as text: %.10g, or the string. */
void kn_sweep_value_text(const struct kn_sweep *sw, int p, double v, char *out, size_t outlen);
/* "name=value;name=value" of case c; its length (less than outlen). */
size_t kn_sweep_canonical(const struct kn_sweep *sw, const struct kn_sweep_case *c, char *out,
                          size_t outlen);
/* The sweep's hash: name, scenario bytes, variant, every case's canonical. */
uint64_t kn_sweep_hash(const struct kn_sweep *sw, const char *scen, size_t scenlen);

/* ---- sampling (sample.c): seeded, the same draws on every machine ---- */

struct kn_sweep_rng {
    uint64_t s;
};
void kn_sweep_rng_seed(struct kn_sweep_rng *r, uint64_t seed);
uint64_t kn_sweep_rng_next(struct kn_sweep_rng *r);
/* Uniform in [0, n), n > 0, without modulo bias. */
uint64_t kn_sweep_rng_below(struct kn_sweep_rng *r, uint64_t n);
/* Uniform in [lo, hi]. */
double kn_sweep_rng_uniform(struct kn_sweep_rng *r, double lo, double hi);
/* k distinct numbers of [0, n), k <= n, ascending, into out. 0, or -1
 * when out of memory. */
int kn_sweep_sample_distinct(struct kn_sweep_rng *r, uint64_t n, size_t k, uint64_t *out);

/* ---- shards (shard.c) ---- */

/* "K/N" with 1 <= K <= N: 0, or -1 with the reason. */
int kn_sweep_shard_parse(const char *s, int *k, int *n, char *err, size_t errlen);
/* Whether the case at 0-based index i belongs to shard k of n. */
int kn_sweep_in_shard(size_t i, int k, int n);

#endif
