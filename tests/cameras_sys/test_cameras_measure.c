/* kenaf-cameras measured from outside, with a real kenaf-simd on the
 * engine. "on-demand" and "overlay" (suites cameras, system): nothing is
 * rendered while nobody watches, a snapshot still gets a frame, and one
 * comes with 503 when no frame can be drawn; the overlay's stamp is read
 * back from a snapshot decoded by ffmpeg. "latency" and "churn" (suite
 * bench) print figures and assert no timing: the age of each frame of
 * the front H.264 stream at a real decoder (ffmpeg) against the robot's
 * clock, and 20 clients joining and leaving many times while the
 * program's memory and descriptors are sampled (a leak fails it:
 * descriptors not back to where they were, memory grown past a
 * generous bound). docs/performance.md#cameras says how to read them. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <check.h>

#include "camsys.h"
#include "procstat.h"
#include "stamp.h"

#define W 640
#define H 480

static void setup_plain(void)
{
    h_setup();
    start_daemon();
    cameras_start(NULL);
}

static void setup_overlay(void)
{
    h_setup();
    start_daemon();
    const char *extra[] = { "--overlay", NULL };
    cameras_start(extra);
}

/* How often `what` is in kenaf-cameras's stderr so far. */
static int logged(const char *what)
{
    int n = 0;
    for (const char *p = h_stderr(&cams); (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

static void wait_logged(const char *what)
{
    uint64_t end = h_now_us() + 60000000u;
    while (!logged(what) && h_now_us() < end)
        h_sleep_ms(100);
    ck_assert_msg(logged(what), "\"%s\" not logged: %s", what, h_stderr(&cams));
}

/* SIGTERM, exit 0; the frames it rendered (its --stats line). */
static long stop_rendered(void)
{
    h_signal(&cams, SIGTERM);
    int st = h_wait_exit(&cams, 30000);
    ck_assert_msg(st == 0, "exit status %d: %s", st, h_stderr(&cams));
    const char *p = strstr(h_stderr(&cams), "kenaf-cameras: ");
    long n = -1;
    while (p && n < 0) {
        if (sscanf(p, "kenaf-cameras: %ld frames rendered", &n) != 1)
            n = -1;
        p = strstr(p + 1, "kenaf-cameras: ");
    }
    ck_assert_msg(n >= 0, "no render figures: %s", h_stderr(&cams));
    return n;
}

START_TEST(on_demand)
{
    /* watched by nobody: the robot is there, nothing is drawn */
    wait_logged("STATUS from");
    h_sleep_ms(2000);
    ck_assert_int_eq(stop_rendered(), 0);
    /* a snapshot still gets a frame, drawn for it */
    cameras_start(NULL);
    wait_logged("STATUS from");
    h_sleep_ms(1000);
    ck_assert_int_eq(fetch(url("http", "kenaf/front.jpg"), h_path("front.jpg")), 200);
    ck_assert_int_ge(stop_rendered(), 1);
    /* no robot answers: no frame can be drawn, the snapshot gets 503 */
    char *argv[] = { (char *)env_or("KN_CAMERAS", "kenaf-cameras"),
                     "--robot",
                     "127.0.0.1:9",
                     "--rtsp-port",
                     "0",
                     "--http-port",
                     "0",
                     NULL };
    h_spawn(&cams, argv, NULL, "kenaf-cameras-alone.stderr");
    char line[256];
    http_port = 0;
    while (!http_port && h_read_line(&cams, line, sizeof line, H_LONG_MS))
        if (sscanf(line, "kenaf-cameras: http://127.0.0.1:%d/", &http_port) != 1)
            http_port = 0;
    ck_assert_msg(http_port, "no URLs: %s", h_stderr(&cams));
    ck_assert_int_eq(fetch(url("http", "kenaf/front.jpg"), h_path("none.txt")), 503);
    ck_assert_ptr_nonnull(strstr(h_file_text(h_path("none.txt")), "no frame within"));
}
END_TEST

/* A snapshot of the camera, decoded by ffmpeg to grey (W x H bytes). */
static uint8_t *snapshot_grey(const char *cam, const char *name)
{
    char jpg[300], grey[310], path[64], out[256];
    snprintf(jpg, sizeof jpg, "%s", h_path(name));
    snprintf(grey, sizeof grey, "%s.grey", jpg);
    snprintf(path, sizeof path, "kenaf/%s.jpg", cam);
    ck_assert_int_eq(fetch(url("http", path), jpg), 200);
    char *argv[] = { "ffmpeg", "-v",       "error",    "-y",   "-i", jpg,
                     "-f",     "rawvideo", "-pix_fmt", "gray", grey, NULL };
    ck_assert_msg(h_run_prog(argv, out, sizeof out) == 0, "ffmpeg %s: %s", jpg,
                  h_file_text(h_path("prog.stderr")));
    FILE *f = fopen(grey, "rb");
    ck_assert_ptr_nonnull(f);
    uint8_t *px = malloc((size_t)W * H);
    ck_assert_ptr_nonnull(px);
    ck_assert_uint_eq(fread(px, 1, (size_t)W * H, f), (size_t)W * H);
    fclose(f);
    return px;
}

/* The config's "overlay": on for both cameras, off again for the
 * bird's-eye one. The front snapshot's stamp carries the robot time of
 * the STATUS around it; the bird's-eye one has none. */
static void setup_overlay_config(void)
{
    h_setup();
    start_daemon();
    h_write_file(h_path("cameras.json"), "{\"overlay\": true, \"birdseye\": {\"overlay\": false}}");
    const char *extra[] = { "--config", h_path("cameras.json"), NULL };
    cameras_start(extra);
    wait_logged("STATUS from");
}

START_TEST(overlay)
{
    struct kn_stamp a, b;
    uint64_t before_ms = h_status_any(&u).time_us / 1000u;
    uint8_t *px = snapshot_grey("front", "a.jpg");
    uint64_t after_ms = h_status_any(&u).time_us / 1000u;
    ck_assert_msg(kn_stamp_read(px, W, H, W, 1, &a) == 0, "no stamp in front.jpg");
    free(px);
    printf("stamp: frame %u, robot %u ms; STATUS %llu..%llu ms\n", a.frame, a.robot_ms,
           (unsigned long long)before_ms, (unsigned long long)after_ms);
    /* the frame's time runs on from a STATUS by the wall clock: within a
     * second of the STATUS taken around it, whatever the load */
    ck_assert_int_ge((int64_t)a.robot_ms, (int64_t)(uint32_t)before_ms - 1000);
    ck_assert_int_le((int64_t)a.robot_ms, (int64_t)(uint32_t)after_ms + 1000);
    px = snapshot_grey("front", "b.jpg");
    ck_assert_int_eq(kn_stamp_read(px, W, H, W, 1, &b), 0);
    free(px);
    ck_assert_uint_gt(b.frame, a.frame);
    ck_assert_uint_gt(b.robot_ms, a.robot_ms);
    px = snapshot_grey("birdseye", "c.jpg");
    ck_assert_int_eq(kn_stamp_read(px, W, H, W, 1, &b), -1);
    free(px);
    /* every picture of the H.264 stream, P frames too, once ffmpeg has
     * its first key frame */
    char grey[300], out[256];
    snprintf(grey, sizeof grey, "%s", h_path("rtsp.grey"));
    char *argv[] = { "ffmpeg",
                     "-v",
                     "error",
                     "-y",
                     "-rtsp_transport",
                     "tcp",
                     "-i",
                     (char *)url("rtsp", "kenaf/front"),
                     "-frames:v",
                     "60",
                     "-fps_mode",
                     "passthrough",
                     "-f",
                     "rawvideo",
                     "-pix_fmt",
                     "gray",
                     grey,
                     NULL };
    ck_assert_msg(h_run_prog(argv, out, sizeof out) == 0, "ffmpeg: %s",
                  h_file_text(h_path("prog.stderr")));
    FILE *f = fopen(grey, "rb");
    ck_assert_ptr_nonnull(f);
    px = malloc((size_t)W * H);
    ck_assert_ptr_nonnull(px);
    int n = 0, stamped = 0;
    while (fread(px, 1, (size_t)W * H, f) == (size_t)W * H) {
        bool ok = kn_stamp_read(px, W, H, W, 1, &b) == 0;
        ck_assert_msg(ok || stamped == 0, "frame %d of the H.264 stream: no stamp after %d", n,
                      stamped);
        stamped += ok;
        n++;
    }
    fclose(f);
    free(px);
    printf("H.264 over RTSP: %d frames, %d stamped\n", n, stamped);
    ck_assert_int_ge(stamped, 30);
}
END_TEST

/* The CPU kenaf-cameras uses while nobody watches, over 10 s. */
START_TEST(idle)
{
    wait_logged("STATUS from");
    h_sleep_ms(2000);
    long long a = kn_procstat_cpu_ticks(cams.pid);
    uint64_t t0 = h_now_us();
    h_sleep_ms(10000);
    long long b = kn_procstat_cpu_ticks(cams.pid);
    double secs = (double)(h_now_us() - t0) / 1e6;
    ck_assert_msg(a >= 0 && b >= a, "no /proc/%d/stat", (int)cams.pid);
    double hz = (double)sysconf(_SC_CLK_TCK);
    printf("FIGURE idle: %s, one robot, no client: %lld clock ticks of CPU in %.1f s "
           "(%.1f %% of one core; utime + stime)\n",
           env_or("KN_CAMERAS", "kenaf-cameras"), b - a, secs, 100.0 * (double)(b - a) / hz / secs);
    fflush(stdout);
}
END_TEST

/* ---- latency ---- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    if (n == 0)
        return NAN;
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

static double env_num(const char *name, double dflt)
{
    const char *v = getenv(name);
    return v && *v ? atof(v) : dflt;
}

/* The robot clock on ours: each STATUS's robot time against the
 * monotonic time it arrived; the smallest difference over the last two
 * seconds is the freshest STATUS, the best estimate (late by its age). */
#define CLOCK_RING 128
struct robot_clock {
    int64_t off_us[CLOCK_RING]; /* arrival - robot time */
    uint64_t at_us[CLOCK_RING];
    unsigned n;
};

static void clock_add(struct robot_clock *c, uint64_t now_us, uint64_t robot_us)
{
    c->off_us[c->n % CLOCK_RING] = (int64_t)(now_us - robot_us);
    c->at_us[c->n % CLOCK_RING] = now_us;
    c->n++;
}

/* The offset (min over the last 2 s) and its spread (max - min), -1 n/a. */
static bool clock_offset(const struct robot_clock *c, uint64_t now_us, int64_t *off,
                         int64_t *spread)
{
    bool any = false;
    int64_t lo = 0, hi = 0;
    for (unsigned i = 0; i < CLOCK_RING && i < c->n; i++) {
        if (now_us - c->at_us[i] > 2000000u)
            continue;
        if (!any || c->off_us[i] < lo)
            lo = c->off_us[i];
        if (!any || c->off_us[i] > hi)
            hi = c->off_us[i];
        any = true;
    }
    *off = lo;
    *spread = hi - lo;
    return any;
}

START_TEST(latency)
{
    double seconds = env_num("KN_LATENCY_S", 15);
    const char *ff = h_which("ffmpeg");
    ck_assert_ptr_nonnull(ff);
    char ffpath[512];
    snprintf(ffpath, sizeof ffpath, "%s", ff);
    /* one decoding thread, no input buffering, every frame out as it is
     * decoded and written at once: the decoder adds no frames of delay */
    char *argv[] = { ffpath,
                     "-nostdin",
                     "-v",
                     "error",
                     "-threads",
                     "1",
                     "-fflags",
                     "nobuffer",
                     "-flags",
                     "low_delay",
                     "-rtsp_transport",
                     "tcp",
                     "-i",
                     (char *)url("rtsp", "kenaf/front"),
                     "-fps_mode",
                     "passthrough",
                     "-f",
                     "rawvideo",
                     "-pix_fmt",
                     "gray",
                     "-flush_packets",
                     "1",
                     "pipe:1",
                     NULL };
    struct h_proc p;
    h_spawn(&p, argv, NULL, "ffmpeg-latency.stderr");
    size_t fsize = (size_t)W * H, have = 0;
    uint8_t *frame = malloc(fsize);
    double *lat = malloc(sizeof(double) * 100000);
    ck_assert_ptr_nonnull(frame);
    ck_assert_ptr_nonnull(lat);
    static struct robot_clock rc;
    memset(&rc, 0, sizeof rc);
    size_t nlat = 0;
    long frames = 0, unread = 0, dropped = 0, duplicated = 0, back = 0;
    int64_t spread_max = 0;
    long last = -1;
    uint64_t next_req = 0, first_frame = 0, end = h_now_us() + 60000000u;
    while (h_now_us() < end) {
        uint64_t now = h_now_us();
        if (now >= next_req) { /* STATUS_REQ at 50 Hz */
            h_simple(&u, 0, KN_KRP_STATUS_REQ, 0);
            next_req = now + 20000u;
        }
        struct pollfd pf[2] = { { .fd = p.out_fd, .events = POLLIN },
                                { .fd = u.fd, .events = POLLIN } };
        poll(pf, 2, 5);
        if (pf[1].revents & POLLIN) {
            struct kn_krp_msg m;
            while (h_udp_recv(&u, &m, 0))
                if (m.h.type == KN_KRP_STATUS)
                    clock_add(&rc, h_now_us(), m.u.status.time_us);
        }
        if (!(pf[0].revents & (POLLIN | POLLHUP)))
            continue;
        ssize_t n = read(p.out_fd, frame + have, fsize - have);
        ck_assert_msg(n > 0, "ffmpeg ended: %s", h_stderr(&p));
        have += (size_t)n;
        if (have < fsize)
            continue;
        have = 0;
        uint64_t t = h_now_us();
        if (!first_frame) {
            first_frame = t;
            end = t + (uint64_t)(seconds * 1e6);
        }
        frames++;
        struct kn_stamp st;
        int64_t off, spread;
        if (kn_stamp_read(frame, W, H, W, 1, &st) < 0) {
            unread++;
            continue;
        }
        if (last >= 0) {
            long d = (long)((st.frame - (uint32_t)last) & 0xFFFFFFu);
            if (d == 0)
                duplicated++;
            else if (d > 0x800000)
                back++;
            else
                dropped += d - 1;
        }
        last = st.frame;
        if (!clock_offset(&rc, t, &off, &spread))
            continue;
        spread_max = spread > spread_max ? spread : spread_max;
        /* the robot's time now, its low 32 bits in ms as the stamp has it */
        uint64_t robot_now_us = t - (uint64_t)off;
        int32_t age_ms = (int32_t)((uint32_t)(robot_now_us / 1000u) - st.robot_ms);
        if (nlat < 100000)
            lat[nlat++] = age_ms;
    }
    h_signal(&p, SIGINT);
    h_wait_exit(&p, 30000);
    ck_assert_msg(frames > 0, "no frame decoded: %s", h_stderr(&p));
    qsort(lat, nlat, sizeof lat[0], cmp_double);
    printf("FIGURE latency: %ld frames in %.0f s decoded by ffmpeg (%zu timed, %ld without a "
           "stamp)\n",
           frames, seconds, nlat, unread);
    printf("FIGURE latency: robot time in frame to decoded: p50 %.0f ms, p95 %.0f ms, max "
           "%.0f ms (target p95 <= 150 ms: %s)\n",
           pct(lat, nlat, 50), pct(lat, nlat, 95), pct(lat, nlat, 100),
           pct(lat, nlat, 95) <= 150 ? "met" : "MISSED");
    printf("FIGURE latency: frame numbers: %ld dropped, %ld duplicated, %ld went back\n", dropped,
           duplicated, back);
    printf("FIGURE latency: robot clock from %u STATUS, offset spread over 2 s at most %.1f ms\n",
           rc.n, (double)spread_max / 1000.0);
    fflush(stdout);
    ck_assert_msg(nlat > 0, "no frame with a stamp was timed");
    free(frame);
    free(lat);
}
END_TEST

/* ---- churn ---- */

static long fd_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *dir = opendir(path);
    if (!dir)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        n += e->d_name[0] != '.';
    closedir(dir);
    return n;
}

enum kind { K_RTSP, K_MJPEG, K_SNAP, K_MJPEG_QUIT, K_SNAP2, K_NKINDS };
static const char *const kind_name[K_NKINDS] = {
    "RTSP front, birdseye.mjpeg (ffmpeg)", "MJPEG birdseye.mjpg (socket)",
    "snapshot front.jpg (socket)", "MJPEG, gone at once (socket)", "snapshot birdseye.jpg (socket)"
};

struct slot {
    bool busy;
    enum kind kind;
    int fd;
    struct h_proc p;
    char got[256]; /* the first bytes of the answer */
    size_t ngot, total;
    uint64_t deadline;
};

static int connect_http(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)http_port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    return fd;
}

static void join(struct slot *s, enum kind k, long i)
{
    memset(s, 0, sizeof *s);
    s->busy = true;
    s->kind = k;
    s->fd = -1;
    s->deadline = h_now_us() + 60000000u;
    if (k == K_RTSP) {
        /* a real RTSP client: DESCRIBE, SETUP, PLAY, three frames, TEARDOWN */
        static char ffpath[512];
        if (!ffpath[0])
            snprintf(ffpath, sizeof ffpath, "%s", h_which("ffmpeg"));
        const char *mount = (i / K_NKINDS) % 2 ? "kenaf/birdseye.mjpeg" : "kenaf/front";
        char *argv[] = { ffpath,      "-nostdin", "-v", "error",
                         "-timeout",  "20000000", "-i", (char *)url("rtsp", mount),
                         "-frames:v", "3",        "-f", "null",
                         "-",         NULL };
        h_spawn(&s->p, argv, NULL, "churn-ffmpeg.stderr");
        return;
    }
    s->fd = connect_http();
    const char *path = k == K_SNAP    ? "/kenaf/front.jpg"
                       : k == K_SNAP2 ? "/kenaf/birdseye.jpg"
                                      : "/kenaf/birdseye.mjpg";
    char req[256];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
    ck_assert_int_eq(send(s->fd, req, (size_t)n, MSG_NOSIGNAL), n);
    if (k == K_MJPEG_QUIT) { /* gone before the first part */
        close(s->fd);
        s->fd = -1;
        s->busy = false;
    }
}

/* true when the client is done: *ok says whether it got what it asked. */
static bool step(struct slot *s, bool *ok)
{
    if (s->kind == K_RTSP) {
        int st = h_wait_exit(&s->p, 0);
        if (st == -1 && h_now_us() < s->deadline)
            return false;
        if (st == -1) {
            h_signal(&s->p, SIGKILL);
            st = h_wait_exit(&s->p, 30000);
        }
        *ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        h_forget(&s->p);
        return true;
    }
    char buf[65536];
    ssize_t n = recv(s->fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR) && h_now_us() < s->deadline)
        return false;
    if (n > 0) {
        size_t k = sizeof s->got - 1 - s->ngot;
        k = (size_t)n < k ? (size_t)n : k;
        memcpy(s->got + s->ngot, buf, k);
        s->ngot += k;
        s->got[s->ngot] = '\0';
        s->total += (size_t)n;
        /* an MJPEG client leaves after its first 100 kB (a few parts) */
        if (s->kind != K_MJPEG || s->total < 100000)
            return false;
    }
    *ok = strncmp(s->got, "HTTP/1.1 200", 12) == 0 && s->total > 1000;
    close(s->fd);
    s->fd = -1;
    return true;
}

struct sample {
    long rss_kib, fds;
};

static struct sample sample_of(void)
{
    struct sample s = { h_rss_kb(cams.pid), fd_count(cams.pid) };
    return s;
}

START_TEST(churn)
{
    long joins = (long)env_num("KN_CHURN_JOINS", 200);
    wait_logged("STATUS from");
    /* one of each first: what GStreamer and Mesa make once and keep
     * (the registry, the clock's sockets, the encoders' code) is part of
     * the start, not of the growth */
    enum { NSLOTS = 20 };
    static struct slot slots[NSLOTS];
    long ok_by[K_NKINDS] = { 0 }, failed_by[K_NKINDS] = { 0 };
    for (int k = 0; k < K_NKINDS; k++) {
        bool ok = false;
        join(&slots[0], (enum kind)k, k);
        while (slots[0].busy && !step(&slots[0], &ok))
            h_sleep_ms(10);
        slots[0].busy = false;
    }
    h_sleep_ms(3000);
    struct sample start = sample_of(), middle = { 0, 0 };
    long started = 0, done = 0;
    uint64_t t0 = h_now_us();
    while (done < joins) {
        for (int i = 0; i < NSLOTS; i++) {
            struct slot *s = &slots[i];
            bool ok = false;
            if (s->busy && step(s, &ok)) {
                s->busy = false;
                done++;
                (ok ? ok_by : failed_by)[s->kind]++;
            }
            if (!s->busy && started < joins) {
                join(s, (enum kind)(started % K_NKINDS), started);
                started++;
                if (!s->busy) { /* left at once */
                    done++;
                    ok_by[s->kind]++;
                }
            }
        }
        if (!middle.fds && done >= joins / 2)
            middle = sample_of();
        h_sleep_ms(5);
    }
    double secs = (double)(h_now_us() - t0) / 1e6;
    /* every client gone: the descriptors come back to where they were
     * (the RTSP media and sessions are closed as their clients leave) */
    uint64_t end = h_now_us() + 120000000u;
    struct sample last = sample_of();
    while (last.fds > start.fds && h_now_us() < end) {
        h_sleep_ms(500);
        last = sample_of();
    }
    printf("FIGURE churn: %ld joins and leaves by %d clients at a time in %.0f s\n", done, NSLOTS,
           secs);
    for (int k = 0; k < K_NKINDS; k++)
        printf("FIGURE churn: %-36s %ld served, %ld not\n", kind_name[k], ok_by[k], failed_by[k]);
    printf("FIGURE churn: VmRSS start %ld KiB, middle %ld KiB, end %ld KiB (end/start %.3f)\n",
           start.rss_kib, middle.rss_kib, last.rss_kib,
           (double)last.rss_kib / (double)start.rss_kib);
    printf("FIGURE churn: open descriptors start %ld, middle %ld, end %ld (end/start %.3f)\n",
           start.fds, middle.fds, last.fds, (double)last.fds / (double)start.fds);
    fflush(stdout);
    ck_assert_msg(last.fds <= start.fds, "descriptors: %ld at start, %ld after every client left",
                  start.fds, last.fds);
    /* a leak of what a client costs (an encoder, a pipeline: megabytes)
     * would pass this many times over; the allocator keeping freed
     * memory does not */
    ck_assert_msg(last.rss_kib <= start.rss_kib + 256 * 1024, "VmRSS grew from %ld to %ld KiB",
                  start.rss_kib, last.rss_kib);
    ck_assert_int_gt(ok_by[K_RTSP] + ok_by[K_MJPEG] + ok_by[K_SNAP], 0);
}
END_TEST

int main(void)
{
    const char *slow = "the engine under valgrind runs many times slower than these figures "
                       "assume";
    h_not_wrapped("latency", slow);
    h_not_wrapped("churn", slow);
    h_not_wrapped("idle", slow);
    const struct h_case cases[] = {
        { "on-demand", on_demand, 240, setup_plain, teardown },
        { "overlay", overlay, 240, setup_overlay_config, teardown },
        { "latency", latency, 300, setup_overlay, teardown },
        { "churn", churn, 1800, setup_plain, teardown },
        { "idle", idle, 120, setup_plain, teardown },
    };
    return h_run_cases("cameras-measure", cases, sizeof cases / sizeof cases[0]);
}
