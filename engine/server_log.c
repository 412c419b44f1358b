/* kenaf-engine's own output to whoever started it: log lines on stderr
 * and the heartbeat on stdout (server_int.h, struct kn_srv_outfd). A
 * parent that stops reading (kenaf-simd stopped, a pipe nobody drains)
 * must never stop the simulation: the engine's loop serves every robot
 * and the physics, so one blocked write(2) would freeze them all. So a
 * pipe gets a private non-blocking open file description of its own and
 * a socket MSG_DONTWAIT; what does not fit is dropped and counted, and
 * the next log line that gets through says how much was lost. Each write
 * is at most PIPE_BUF bytes, which a pipe takes whole or not at all. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logline.h"
#include "server_int.h"

void kn_srv_outfd_open(struct kn_srv_outfd *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return;
    if (S_ISSOCK(st.st_mode)) {
        o->sock = true;
        return;
    }
    if (!S_ISFIFO(st.st_mode))
        return; /* a terminal or a file: a reader cannot stall those for long */
    /* O_NONBLOCK on the inherited description would reach every process
     * sharing it (a shell's terminal, a test harness's pipe): a pipe
     * opened again through /proc is a description of our own */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (nfd < 0)
        return;
    if (dup2(nfd, fd) == fd)
        o->nonblock = true;
    close(nfd);
}

bool kn_srv_outfd_write(struct kn_srv_outfd *o, const char *buf, size_t len, size_t counted)
{
    if (len > PIPE_BUF)
        len = PIPE_BUF;
    for (;;) {
        ssize_t n =
            o->sock ? send(o->fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) : write(o->fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == (ssize_t)len)
            return true;
        /* a socket may take part of it; the line is lost all the same */
        o->lines_dropped++;
        o->bytes_dropped += counted;
        o->unreported++;
        o->unreported_bytes += counted;
        return false;
    }
}

void kn_srv_log_text(struct kn_srv *s, const char *text)
{
    char out[PIPE_BUF];
    size_t n = 0;
    struct kn_srv_outfd *o = &s->log;
    if (o->unreported) {
        int w =
            snprintf(out, sizeof out,
                     "kenaf-engine: %llu log line%s (%llu bytes) dropped: nobody read the "
                     "log (%llu in all)\n",
                     (unsigned long long)o->unreported, o->unreported == 1 ? "" : "s",
                     (unsigned long long)o->unreported_bytes, (unsigned long long)o->lines_dropped);
        n = w > 0 && (size_t)w < sizeof out ? (size_t)w : 0;
    }
    size_t t = strlen(text);
    if (t > sizeof out - n - 1)
        t = sizeof out - n - 1; /* one write, whole or not at all */
    /* out is bytes for write(2), counted in n: it needs no NUL */
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result) */
    memcpy(out + n, text, t);
    n += t;
    if (kn_srv_outfd_write(o, out, n, t))
        o->unreported = o->unreported_bytes = 0;
}

void kn_srv_log(struct kn_srv *s, const char *fmt, ...)
{
    if (s->o.quiet)
        return;
    char line[PIPE_BUF];
    int n = snprintf(line, sizeof line, "kenaf-engine: ");
    va_list ap;
    va_start(ap, fmt);
    kn_logline_vformat(line, sizeof line, n < 0 ? 0 : (size_t)n, fmt, ap);
    va_end(ap);
    kn_srv_log_text(s, line);
}
