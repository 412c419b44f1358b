/* What the report's files share (report_read.c reads, report.c
 * computes, report_json.c and report_html.c write, report_merge.c and
 * report_compare.c use them): a sweep as read from its output
 * directory, with each case's result, and its statistics. The decoders
 * take bytes, so the fuzz target and the tests reach them without files. */
#ifndef KN_REPORT_DATA_H
#define KN_REPORT_DATA_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "stats.h"

/* Largest sweep.json and result.json read (a sweep of 10,000 cases with
 * a dozen parameters is about 2 MB). */
#define KN_REPORT_MAX_SWEEP_BYTES (64u << 20)
#define KN_REPORT_MAX_RESULT_BYTES (1u << 20)

/* One value of a parameter: a number, or a string (terrain_family). */
struct kn_report_value {
    double num;
    const char *str; /* NULL for a number; points into the sweep's JSON */
};

struct kn_report_param {
    const char *name;
    const char *unit; /* "" when none */
    int harder;       /* +1 higher, -1 lower, 0 none */
    bool strings;     /* values are strings */
    size_t nvalues;   /* sorted ascending (strings: by strcmp) */
    struct kn_report_value *values;
};

struct kn_report_case {
    char id[11];
    const cJSON *params;              /* the case's "params" in the sweep */
    size_t *vidx;                     /* per parameter: index of its value */
    enum kn_sweepstats_status status; /* KN_SWEEPSTATS_NOT_RUN until read */
    enum kn_sweepstats_mode mode;
    char *why;     /* the verdict's sentence, or why the result is bad */
    double sim_s;  /* 0 when not given */
    cJSON *result; /* result.json as read (NULL: not run or unreadable) */
};

struct kn_report_sweep {
    cJSON *doc; /* sweep.json; the strings above point into it */
    const char *name, *hash, *scenario;
    double target;
    size_t nparams;
    struct kn_report_param *params;
    size_t ncases;
    struct kn_report_case *cases;
    bool sharded;
    long shard_k, shard_n;
    /* for the rerun command: optional in sweep.json, "FILE" and
     * "PROGRAM" stand in when absent */
    const char *sweep_file;
    const cJSON *program; /* array of strings */
};

/* Decodes sweep.json's text into s (zeroed first; free it with
 * kn_report_sweep_free whatever the result). 0, or -1 with a one-line
 * reason in err naming the field. */
int kn_report_parse_sweep(const char *buf, size_t len, struct kn_report_sweep *s, char *err,
                          size_t errlen);
/* Decodes a case's result.json text into s->cases[i]. 0, or -1 with the
 * reason in err (the case is left as it was). */
int kn_report_parse_result(struct kn_report_sweep *s, size_t i, const char *buf, size_t len,
                           char *err, size_t errlen);
/* Marks case i as errored with why (a result that could not be read). */
void kn_report_case_bad(struct kn_report_sweep *s, size_t i, const char *why);
void kn_report_sweep_free(struct kn_report_sweep *s);

/* The C numeric locale in force on this thread between begin and end:
 * '.' decimals whatever the caller's locale, so the same results give
 * the same bytes. begin returns false when it could not. */
struct kn_report_locale {
    locale_t c, old;
};
bool kn_report_locale_begin(struct kn_report_locale *l);
void kn_report_locale_end(struct kn_report_locale *l);
/* Formats a one-line reason into err; returns -1. */
int kn_report_fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A whole file into a NUL-terminated buffer the caller frees; NULL
 * with errno set (EFBIG beyond max bytes). */
char *kn_report_read_file(const char *path, size_t max, size_t *len);
/* Reads dir/sweep.json into s. 0, or -1 with err naming the file. */
int kn_report_load_sweep(const char *dir, struct kn_report_sweep *s, char *err, size_t errlen);
/* Reads dir/cases/<id>/result.json of every case of s: a missing file
 * leaves the case not run; an unreadable or malformed one makes it an
 * error saying why. Returns how many were bad. */
size_t kn_report_load_results(const char *dir, struct kn_report_sweep *s);

/* The statistics of a sweep. */
struct kn_report_stats {
    size_t passed, failed, errors, not_run;
    double sim_s;
    unsigned modes[KN_SWEEPSTATS_NMODES];
    struct kn_sweepstats_cell **cells;     /* [param][value] */
    struct kn_sweepstats_boundary *bounds; /* [param]; for params with harder */
};

/* 0, or -1 when out of memory. */
int kn_report_analyse(const struct kn_report_sweep *s, struct kn_report_stats *st);
void kn_report_stats_free(const struct kn_report_sweep *s, struct kn_report_stats *st);

/* report.json as a cJSON tree (the caller deletes it); NULL when out of
 * memory. */
cJSON *kn_report_json(const struct kn_report_sweep *s, const struct kn_report_stats *st);
/* report.html to f. 0, or -1 on a write error. */
int kn_report_html(FILE *f, const struct kn_report_sweep *s, const struct kn_report_stats *st);

/* A value as report.json and the page print it (%.10g, '.' decimals
 * whatever the locale, or the string). */
void kn_report_value_text(const struct kn_report_param *p, size_t v, char *buf, size_t len);
/* Writes text to path through a temporary file renamed into place, so
 * a reader never sees half a file. 0, or -1 with errno set. */
int kn_report_write_file(const char *path, const char *text, size_t len);

#endif
