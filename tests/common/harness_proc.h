/* Test support for tests that run real processes: the monotonic clock, a
 * scratch directory per test, child processes that die with the test
 * (optionally under a KN_WRAP command such as valgrind), their stdout
 * lines and stderr text, and stand-in simulators that announce their port
 * with a "PORT n" line. Every wait has a deadline; failures are Check
 * assertions. */
#ifndef KN_TEST_HARNESS_PROC_H
#define KN_TEST_HARNESS_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define H_LONG_MS 10000 /* generous deadline for things that must happen */

uint64_t h_now_us(void);
void h_sleep_ms(int ms);
/* Waits until fd is readable (or at its end) or the clock passes end_us
 * (h_now_us time; a deadline already past still looks once); true when
 * readable. */
bool h_wait_readable(int fd, uint64_t end_us);

/* Scratch directory for the running test; removed at teardown unless
 * KN_KEEP_TMP is set. h_setup also ignores SIGPIPE (a peer that went away
 * is an answer, not a crash); h_teardown kills and reaps every child the
 * test started. h_path returns a static buffer (rotating, 32 deep: copy a path kept across many calls). */
void h_setup(void);
void h_teardown(void);
const char *h_path(const char *name);
/* Removes a directory and everything in it (as far as it can). */
void h_remove_tree(const char *dir);
/* Written to a temporary name and renamed: readers never see half a file.
 * Mode 0644 whatever the umask. */
void h_write_file(const char *path, const char *text);
/* A file's text (its first 32 KiB), "" when it cannot be read; a static
 * buffer (rotating, 4 deep, so a message can quote several files). */
const char *h_file_text(const char *path);

/* Calls fn with each line of the file (with its end of line; a line over
 * 16 KiB comes in pieces) until fn returns false; false when the file
 * cannot be read. */
bool h_each_line(const char *path, bool (*fn)(const char *line, void *arg), void *arg);
/* The lines parse accepts, parsed into items[0..max) of item_size bytes
 * each; returns how many (0 when the file cannot be read). For the logs
 * the stand-in simulators write. */
int h_parse_lines(const char *path, void *items, size_t item_size, int max,
                  bool (*parse)(const char *line, void *item));

struct h_proc {
    pid_t pid;
    int out_fd;         /* child's stdout */
    char err_path[256]; /* child's stderr */
    int status;         /* once reaped */
    bool reaped;
    bool wrapped; /* runs under KN_WRAP (see below) */
};

/* A child that has exited and been waited for (h_wait_exit) leaves the
 * harness's table, which holds a test's children until teardown: for
 * tests that run a short program many times. Its stdout is closed.
 * Running and wrapped children stay. */
void h_forget(struct h_proc *p);

/* Starts argv[0] with extra environment entries ("K=V", NULL-terminated,
 * may be NULL); its stderr goes to err_name in the scratch directory. The
 * child gets SIGKILL when the test process dies. */
void h_spawn(struct h_proc *p, char *const argv[], char *const env[], const char *err_name);

/* KN_WRAP: a command prefix, split at spaces, put in front of the
 * processes a test starts as the system under test (kenaf-simd, the
 * stand-in simulators, kenaf-engine). For memory checking, e.g.
 *   KN_WRAP="valgrind -q --leak-check=full --error-exitcode=99 ..."
 * (tools/run-valgrind). At teardown a wrapped process that still runs gets
 * SIGTERM instead of SIGKILL and up to 60 s to exit, so the wrapper can
 * finish its report; if a wrapped process exited with the status named by
 * --error-exitcode=N in KN_WRAP, the test fails. */
void h_spawn_wrapped(struct h_proc *p, char *const argv[], char *const env[], const char *err_name);
/* True when KN_WRAP is set. The wrapped programs then run many times
 * slower and their VmRSS is mostly the wrapper's: a test may relax what
 * that changes and the spec does not bound; the spec's bounds stay. */
bool h_wrapped(void);
/* A process's VmRSS in KiB (from /proc/PID/status), or -1 when it is gone. */
long h_rss_kb(pid_t pid);
/* The CPU waits of up to four processes (pid 0: this test) from one
 * moment on: how long their threads have waited for a CPU while runnable,
 * as the kernel's schedstat counts it. h_waited_ms is what they have
 * waited since, in ms. A test that bounds how soon a program reacts adds
 * it to its wall-clock bound: the bound is the program's when it has a
 * CPU, and a loaded machine widens it by the time it had none, by design,
 * not by a margin picked to pass. */
struct h_waits {
    int n;
    pid_t pid[4];
    uint64_t us[4];
};
void h_waits_start(struct h_waits *w, const pid_t *pids, int n);
/* Adds a process started after h_waits_start: all its waiting counts. */
void h_waits_add_new(struct h_waits *w, pid_t pid);
double h_waited_ms(const struct h_waits *w);
/* Exit status (as from waitpid) within timeout_ms, or -1. */
int h_wait_exit(struct h_proc *p, int timeout_ms);
void h_signal(struct h_proc *p, int sig);
/* One line of the child's stdout, without its end of line. */
bool h_read_line(struct h_proc *p, char *buf, size_t len, int timeout_ms);
/* Text the child wrote on stderr so far (see h_file_text). */
const char *h_stderr(struct h_proc *p);
/* gst-launch-1.0 with rtspsrc, status its wait status, out its stdout and
 * err its stderr: true when it played to EOS and failed (exit 1) only on
 * its way down. After "Got EOS"
 * it takes the pipeline down; rtspsrc sends PAUSE and TEARDOWN from its
 * own thread, and gst-rtsp-server closes the connection once it has
 * answered a TEARDOWN (rtsp-client.c), so a PAUSE sent after that finds
 * it closed: "Could not send message. (Received end-of-file)", exit 1.
 * Seen under ASan, where the server answers later. Every ERROR in err
 * must be that one of rtspsrc's, and out must have "Got EOS" and no
 * ERROR. */
bool h_gst_teardown_race(int status, const char *out, const char *err);
/* The n of the child's first stdout line, "PORT n"; fails the test, with
 * the child's stderr, when that line does not come within timeout_ms. */
int h_read_port(struct h_proc *p, int timeout_ms);

/* Full path of a program found in PATH, or NULL (static buffer). */
const char *h_which(const char *prog);

/* h_spawn of argv[0] found in PATH (the test fails when it is not
 * installed), no environment of its own. */
void h_spawn_prog(struct h_proc *p, char *argv[], const char *err_name);

/* Runs argv[0] from PATH to its end (deadline 90 s), its stderr in
 * "prog.stderr"; its stdout's lines joined by '|' in out; returns its
 * exit status (128 + signal when killed). */
int h_run_prog(char *argv[], char *out, size_t outlen);

/* ffprobe's "codec,width,height" of the first video stream at url must
 * be `want` ("h264,640,480"). */
void h_ffprobe_video(const char *url, const char *want);

/* ---- stand-in simulators ---- */
/* A program that takes --port N (0: any free port) and --log FILE, and
 * prints "PORT n" on stdout once it listens. */
struct h_standin {
    struct h_proc proc;
    int port;
    char log[256]; /* NAME.log in the scratch directory */
};
/* Starts the program the environment variable exe_var names, with the
 * extra arguments (NULL-terminated, may be NULL), under KN_WRAP when
 * wrapped; its files are NAME.log and NAME.stderr. Returns once it
 * listens. */
void h_sim_start(struct h_standin *s, const char *exe_var, bool wrapped, int port, const char *name,
                 const char *const extra[]);
void h_standin_kill(struct h_standin *s); /* SIGKILL, reaped */

/* ---- kenaf-engine ---- */
/* Starts kenaf-engine ($KN_ENGINE) with --listen 127.0.0.1:0 and the extra
 * arguments (NULL-terminated, may be NULL), under KN_WRAP when wrapped;
 * returns the port of its "PORT n" line. */
int h_engine_start(struct h_proc *p, const char *const extra[], bool wrapped);

#endif
