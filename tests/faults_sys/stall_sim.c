/* stall_sim: a simulator that hangs, for the stalled-simulator tests. It
 * speaks just enough of the stand-in link (docs/custom-simulator.md) to bring
 * kenaf-simd's link up: it reads the hello line, answers "ready" and one
 * state line, and then reads nothing more until SIGUSR2. From then on it
 * reads everything and records each line as standin_sim does:
 *
 *   <CLOCK_MONOTONIC us> <client> <line>      (events as "#...")
 *
 *   stall_sim [--port N] --log FILE [--stream]
 *
 * Prints "PORT <n>" once it listens on 127.0.0.1. Without --stream it
 * also writes nothing while hung (a simulator stuck as a whole); with
 * --stream it keeps sending a state line every 10 ms (a simulator whose
 * command side is stuck while its sensor side streams on). One client. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static FILE *logf_;

static void log_line(const char *text, size_t len)
{
    fprintf(logf_, "%llu 1 %.*s\n", (unsigned long long)mono_us(), (int)len, text);
    fflush(logf_);
}

static void send_all(int fd, const char *s)
{
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t w = send(fd, s + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        off += (size_t)w;
    }
}

static const char state_line[] =
    "{\"type\":\"state\",\"t\":%.3f,\"belt_pos\":[0,0],\"belt_speed\":[0,0],"
    "\"flipper\":[0,0,0,0],\"rpy\":[0,0,0],\"pos\":[0,0,0],\"battery\":24.0}\n";

static void send_state(int fd, double t)
{
    char buf[256];
    snprintf(buf, sizeof buf, state_line, t);
    send_all(fd, buf);
}

/* Splits what arrived into lines; keeps a partial line for next time. */
static char acc[1 << 16];
static size_t acc_len;

static void feed(const char *data, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (data[i] == '\n') {
            if (acc_len)
                log_line(acc, acc_len);
            acc_len = 0;
        } else if (acc_len < sizeof acc) {
            acc[acc_len++] = data[i];
        }
    }
}

int main(int argc, char **argv)
{
    const char *logpath = NULL;
    bool stream = false;
    int port = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log") == 0 && i + 1 < argc)
            logpath = argv[++i];
        else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (strcmp(argv[i], "--stream") == 0)
            stream = true;
        else {
            fprintf(stderr, "usage: stall_sim [--port N] --log FILE [--stream]\n");
            return 2;
        }
    }
    if (!logpath || port < 0 || port > 65535) {
        fprintf(stderr, "usage: stall_sim [--port N] --log FILE [--stream]\n");
        return 2;
    }
    logf_ = fopen(logpath, "a");
    if (!logf_) {
        perror(logpath);
        return 1;
    }
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigprocmask(SIG_BLOCK, &mask, NULL);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);

    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    if (sfd < 0 || ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) < 0 || listen(ls, 4) < 0 ||
        getsockname(ls, (struct sockaddr *)&a, &al) < 0) {
        perror("stall_sim");
        return 1;
    }
    printf("PORT %u\n", ntohs(a.sin_port));
    fflush(stdout);

    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
        perror("accept");
        return 1;
    }
    int one = 1;
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    log_line("#connect", 8);
    /* the handshake: read up to the end of the hello line, nothing more */
    char ch;
    while (recv(c, &ch, 1, 0) == 1) {
        feed(&ch, 1);
        if (ch == '\n')
            break;
    }
    send_all(c, "{\"type\":\"ready\",\"sim\":\"stall_sim\"}\n");
    send_state(c, 0);
    log_line("#paused", 7);

    bool reading = false;
    uint64_t t0 = mono_us(), next = t0 + 10000;
    for (;;) {
        struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
                               { .fd = c, .events = reading ? POLLIN : 0 } };
        int wait = -1;
        if (stream) {
            uint64_t now = mono_us();
            wait = next > now ? (int)((next - now + 999) / 1000) : 0;
        }
        int r = poll(p, 2, wait);
        if (r < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                if (si.ssi_signo != SIGUSR2)
                    break;
                if (!reading)
                    log_line("#resumed", 8);
                reading = true;
            }
        }
        if (reading && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[65536];
            ssize_t n = recv(c, buf, sizeof buf, 0);
            if (n <= 0) {
                log_line("#disconnect", 11);
                break;
            }
            feed(buf, (size_t)n);
        }
        if (stream && mono_us() >= next) {
            send_state(c, (double)(mono_us() - t0) / 1e6);
            next += 10000;
        }
    }
    close(c);
    fclose(logf_);
    return 0;
}
