/* The process-wide library state and the small helpers every part uses:
 * monotonic time, condvar waits with a deadline, debug output. */
#include "lib.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "convert.h"

struct kn_lib kn_lib = {
    .life_mu = PTHREAD_MUTEX_INITIALIZER,
    .motion_mu = PTHREAD_MUTEX_INITIALIZER,
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .send_mu = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
    .wake = { -1, -1 },
};

static pthread_once_t cond_once = PTHREAD_ONCE_INIT;

/* The condvar waits against CLOCK_MONOTONIC so a wall clock step cannot
 * stretch a timeout; that needs an attribute, hence no static initializer. */
static void init_cond(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&kn_lib.cond, &a);
    pthread_condattr_destroy(&a);
}

void kn_lib_once(void)
{
    pthread_once(&cond_once, init_cond);
}

int64_t kn_lib_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void kn_lib_wait_locked(int64_t deadline)
{
    struct timespec ts = {
        .tv_sec = (time_t)(deadline / 1000000000),
        .tv_nsec = (long)(deadline % 1000000000),
    };
    pthread_cond_timedwait(&kn_lib.cond, &kn_lib.mu, &ts);
}

/* Read from any thread without the lock, so atomic. */
static atomic_bool debug_on;

void kn_lib_set_debug(bool on)
{
    atomic_store(&debug_on, on);
}

void kn_lib_debug(const char *fmt, ...)
{
    if (!atomic_load_explicit(&debug_on, memory_order_relaxed))
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "libkenaf: %s\n", line);
}

double kn_lib_mm_per_count_locked(void)
{
    /* counts_per_m comes from HELLO_ACK, validated > 0 on receipt */
    return kn_conv_mm_per_count(kn_lib.hello.counts_per_m);
}
