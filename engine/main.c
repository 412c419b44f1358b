/* kenaf-engine: the built-in Kenaf simulator. This file only picks the
 * mode from the command line; the modes live in runner.c (scenarios and
 * the validation suite) and server.c (the USARSim-protocol server, the
 * mode without --scenario, --validate or --sanity). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"
#include "sanity.h"
#include "server.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kenaf-engine --scenario FILE [--variant N] [--csv FILE] [--svg FILE] [--quiet]\n"
            "                    [--robot FILE]\n"
            "       kenaf-engine --validate [--json] [--dir DIR] [--robot FILE]\n"
            "       kenaf-engine --sanity NAME [--robot FILE]\n"
            "Runs scenarios of the built-in engine (config in %s).\n"
            "--robot replaces the robot file the scenarios name (default robots/kenaf.json).\n"
            "Exit status: 0 outcomes as expected, 1 an outcome differed, 2 usage or file error.\n",
            kn_config_dir());
}

static int runner_mode(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--scenario") == 0 || strcmp(argv[i], "--validate") == 0 ||
            strcmp(argv[i], "--sanity") == 0)
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (!runner_mode(argc, argv))
        return kn_srv_main(argc, argv);
    const char *scenario = NULL, *dir = NULL, *robot = NULL, *sanity = NULL;
    int validate = 0, json = 0;
    struct kn_run_opts o = {NULL, NULL, -1, 0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (strcmp(a, "--scenario") == 0 && next)
            scenario = next;
        else if (strcmp(a, "--csv") == 0 && next)
            o.csv = next;
        else if (strcmp(a, "--svg") == 0 && next)
            o.svg = next;
        else if (strcmp(a, "--dir") == 0 && next)
            dir = next;
        else if (strcmp(a, "--robot") == 0 && next)
            robot = next;
        else if (strcmp(a, "--sanity") == 0 && next)
            sanity = next;
        else if (strcmp(a, "--variant") == 0 && next) {
            char *end;
            long v = strtol(next, &end, 10);
            if (*end || v < 0 || v > 1000) {
                fprintf(stderr, "kenaf-engine: --variant needs a number 0..1000\n");
                return 2;
            }
            o.variant = (int)v;
        } else {
            takes = 0;
            if (strcmp(a, "--validate") == 0)
                validate = 1;
            else if (strcmp(a, "--json") == 0)
                json = 1;
            else if (strcmp(a, "--quiet") == 0)
                o.quiet = 1;
            else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                usage(stdout);
                return 0;
            } else {
                fprintf(stderr, "kenaf-engine: unknown or incomplete option %s\n", a);
                usage(stderr);
                return 2;
            }
        }
        i += takes;
    }
    char rbuf[1024], dbuf[1024];
    int robot_given = robot != NULL;
    o.robot = robot;
    if (!robot) {
        snprintf(rbuf, sizeof rbuf, "%s/robots/kenaf.json", kn_config_dir());
        robot = rbuf;
    }
    if (!dir) {
        snprintf(dbuf, sizeof dbuf, "%s/scenarios", kn_config_dir());
        dir = dbuf;
    }
    if (!!scenario + validate + !!sanity != 1) {
        usage(stderr);
        return 2;
    }
    if (scenario)
        return kn_run_scenario_file(scenario, &o, stdout);
    if (validate)
        return kn_run_validation(dir, robot, robot_given, json, stdout);
    struct kn_robot_params rp;
    char err[768];
    if (kn_robot_load(robot, &rp, err, sizeof err)) {
        fprintf(stderr, "kenaf-engine: %s\n", err);
        return 2;
    }
    struct kn_sanity_result r;
    if (kn_sanity_run(sanity, &rp, &r)) {
        fprintf(stderr, "kenaf-engine: no sanity check \"%s\" (or it failed to set up)\n", sanity);
        return 2;
    }
    printf("sanity-%s: %s; %s\n", sanity, r.passed ? "pass" : "FAIL", r.why);
    return r.passed ? 0 : 1;
}
