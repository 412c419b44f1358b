/* teleop: drive the Kenaf with one command per line on stdin, so a person
 * or a script can steer it. Commands:
 *   f MM          go forward MM millimetres (negative: backward)
 *   t DEG         turn DEG degrees (+ left)
 *   v L R         hold belt speeds L, R in mm/s
 *   p FLIPPER DEG flipper FL|FR|RL|RR (or 0..3) to DEG
 *   w S           wait S seconds of robot time
 *   s             stop
 *   st            print the status
 *   q             quit (also end of input)
 * Blank lines and lines starting with '#' are ignored. Every command
 * answers one line: "ok", "ok (<warning>)" for a clamped value, or
 * "error: <reason>". Exit status: 0 all commands succeeded, 1 some failed,
 * 2 no connection to the robot. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "kenaf.h"

static int flipper_index(const char *name)
{
    static const char *names[4] = { "FL", "FR", "RL", "RR" };
    for (int k = 0; k < 4; k++)
        if (strcasecmp(name, names[k]) == 0)
            return k;
    if (name[0] >= '0' && name[0] <= '3' && name[1] == '\0')
        return name[0] - '0';
    return -1;
}

/* run_line's answers besides the library's codes (which are <= 0). */
enum { LINE_EMPTY = 1, LINE_SYNTAX = 2, LINE_QUIT = 3 };

static int run_line(char *line)
{
    char cmd[8], arg1[32];
    double a, b;
    line[strcspn(line, "\r\n")] = '\0';
    const char *p = line + strspn(line, " \t");
    if (*p == '\0' || *p == '#')
        return LINE_EMPTY;
    if (sscanf(p, "%7s", cmd) != 1)
        return LINE_SYNTAX;

    if (strcmp(cmd, "q") == 0)
        return LINE_QUIT;
    if (strcmp(cmd, "s") == 0)
        return hrt_stop();
    if (strcmp(cmd, "st") == 0) {
        hrt_show_status();
        hrt_status st;
        return hrt_get_status(&st);
    }
    if (strcmp(cmd, "f") == 0 && sscanf(p, "%*s %lf", &a) == 1)
        return hrt_go_forward(a);
    if (strcmp(cmd, "t") == 0 && sscanf(p, "%*s %lf", &a) == 1)
        return hrt_turning(a);
    if (strcmp(cmd, "w") == 0 && sscanf(p, "%*s %lf", &a) == 1)
        return hrt_sleep(a);
    if (strcmp(cmd, "v") == 0 && sscanf(p, "%*s %lf %lf", &a, &b) == 2)
        return hrt_set_crawler_speed(a, b);
    if (strcmp(cmd, "p") == 0 && sscanf(p, "%*s %31s %lf", arg1, &a) == 2) {
        int k = flipper_index(arg1);
        return k < 0 ? HRT_EINVAL : hrt_set_flipper_angle(k, a);
    }
    return LINE_SYNTAX;
}

int main(void)
{
    int rc = hrt_kenaf_init();
    if (rc < 0) {
        fprintf(stderr, "teleop: cannot connect to the robot: %s\n", hrt_strerror(rc));
        return 2;
    }
    int failed = 0;
    char line[256];
    while (fgets(line, sizeof line, stdin) != NULL) {
        rc = run_line(line);
        if (rc == LINE_QUIT)
            break;
        if (rc == LINE_EMPTY)
            continue;
        if (rc == LINE_SYNTAX) {
            printf("error: cannot parse '%s' (commands: f t v p w s st q)\n", line);
            failed = 1;
        } else if (rc == HRT_ERANGE) {
            printf("ok (%s)\n", hrt_strerror(rc));
        } else if (rc < 0) {
            printf("error: %s\n", hrt_strerror(rc));
            failed = 1;
        } else {
            printf("ok\n");
        }
        fflush(stdout);
    }
    hrt_stop();
    hrt_kenaf_exit();
    return failed;
}
