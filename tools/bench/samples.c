/* Clocks and latency samples: every duration is kept (a 30 s run at 1 kHz
 * is 30 000 values), so percentiles are exact rather than bucketed. */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t kn_bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void kn_bench_sleep_until(uint64_t t_ns)
{
    struct timespec ts = { (time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void kn_bench_sleep_ms(int ms)
{
    kn_bench_sleep_until(kn_bench_now_ns() + (uint64_t)ms * 1000000u);
}

void kn_bench_samples_add(struct kn_bench_samples *s, uint64_t ns)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        uint64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "kenaf-bench: out of memory for samples\n");
            exit(1);
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = ns;
}

void kn_bench_samples_free(struct kn_bench_samples *s)
{
    free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q of the samples at or
 * below it. */
static double rank_us(const struct kn_bench_samples *s, double q)
{
    size_t r = (size_t)ceil(q * (double)s->n);
    if (r < 1)
        r = 1;
    if (r > s->n)
        r = s->n;
    return (double)s->v[r - 1] / 1000.0;
}

struct kn_bench_summary kn_bench_summarize(struct kn_bench_samples *s)
{
    struct kn_bench_summary r = { 0 };
    r.n = s->n;
    if (s->n == 0) {
        r.mean_us = r.p50_us = r.p90_us = r.p99_us = r.p999_us = r.min_us = r.max_us = NAN;
        return r;
    }
    qsort(s->v, s->n, sizeof s->v[0], cmp_u64);
    double sum = 0;
    for (size_t i = 0; i < s->n; i++)
        sum += (double)s->v[i];
    r.mean_us = sum / (double)s->n / 1000.0;
    r.p50_us = rank_us(s, 0.50);
    r.p90_us = rank_us(s, 0.90);
    r.p99_us = rank_us(s, 0.99);
    r.p999_us = rank_us(s, 0.999);
    r.min_us = (double)s->v[0] / 1000.0;
    r.max_us = (double)s->v[s->n - 1] / 1000.0;
    return r;
}

static void add_num(cJSON *o, const char *k, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, k, round(v * 1000.0) / 1000.0);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *kn_bench_summary_json(const struct kn_bench_summary *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)s->n);
    add_num(o, "mean_us", s->mean_us);
    add_num(o, "p50_us", s->p50_us);
    add_num(o, "p90_us", s->p90_us);
    add_num(o, "p99_us", s->p99_us);
    add_num(o, "p999_us", s->p999_us);
    add_num(o, "min_us", s->min_us);
    add_num(o, "max_us", s->max_us);
    return o;
}
