/* RLIMIT_NOFILE against a config's robots: see fdlimit.h. */
#include "fdlimit.h"

#include <stdio.h>
#include <sys/resource.h>

size_t kn_fdlimit_robot(const struct kn_cfg_robot *r)
{
    const struct kn_cfg_backend *b = &r->backend;
    /* the KRP/1 socket has two descriptors: one sends, one reads (robot.c) */
    const size_t udp = 2;
    switch (b->kind) {
    case KN_BACKEND_ENGINE: return udp + (b->host[0] ? 1 : 4); /* TCP (+ stdin, stdout, stderr) */
    case KN_BACKEND_GAZEBO: return udp + 6; /* master, server, subscriber, publisher links */
    case KN_BACKEND_GZ: return udp + 8;     /* discovery sockets, ZeroMQ's sockets and pipes */
    case KN_BACKEND_USARSIM:
    case KN_BACKEND_STANDIN: break;
    }
    return udp + 1; /* TCP */
}

size_t kn_fdlimit_need(const struct kn_config *cfg)
{
    size_t n = KN_FDLIMIT_BASE;
    for (size_t i = 0; i < cfg->n_robots; i++)
        n += kn_fdlimit_robot(&cfg->robots[i]);
    return n;
}

int kn_fdlimit_ensure(const struct kn_config *cfg, size_t *soft, char *err, size_t errlen)
{
    size_t need = kn_fdlimit_need(cfg);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        snprintf(err, errlen, "cannot read RLIMIT_NOFILE");
        return -1;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max; /* as far as we may: the hard limit */
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    if (soft)
        *soft = rl.rlim_cur == RLIM_INFINITY ? (size_t)-1 : (size_t)rl.rlim_cur;
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
        snprintf(err, errlen,
                 "%zu robots need about %zu file descriptors, but RLIMIT_NOFILE allows %llu "
                 "(hard limit %llu): raise it (systemd: LimitNOFILE=, a shell: ulimit -n) "
                 "or run fewer robots",
                 cfg->n_robots, need, (unsigned long long)rl.rlim_cur,
                 (unsigned long long)rl.rlim_max);
        return -1;
    }
    return 0;
}
