/* Every program the documentation runs from build/main is one README
 * command 1 builds: the docs test (test_docs.c) runs the blocks against a
 * whole build, so it cannot see a path that command 1 (tools/kenaf-demo)
 * leaves unbuilt; this test reads the demo's ninja targets and every
 * "build/main/PATH" in README.md and docs/ *.md. A path passes when it is
 * one of those targets (or a directory of one), made by `meson setup`
 * itself (kenaf-sim-run, configured from tools/kenaf-sim-run.in), the
 * library every example links, or named in a "ninja -C build/main ..."
 * of the same document (a page that builds what it needs first). And each
 * of the demo's targets is one the build knows (`ninja -t query`), so a
 * renamed program fails here rather than in command 1 on a fresh machine.
 *
 *   test_build_paths SOURCE_ROOT BUILD_ROOT */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness_suite.h"

#define MAX_NAMES 256
#define NAME_LEN 160

struct names {
    char v[MAX_NAMES][NAME_LEN];
    int n;
};

static const char *src_root, *build_root;

static void add(struct names *ns, const char *s, size_t len)
{
    if (len == 0 || len >= NAME_LEN || ns->n == MAX_NAMES)
        return;
    memcpy(ns->v[ns->n], s, len);
    ns->v[ns->n][len] = '\0';
    ns->n++;
}

static int path_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == '/';
}

/* The words after each "ninja -C <dir>" in text up to the line's end,
 * over backslash continuations, that look like targets (a '/' in them). */
static void ninja_targets(const char *text, const char *dir, struct names *out)
{
    char head[64];
    snprintf(head, sizeof head, "ninja -C %s ", dir);
    for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
        const char *q = p + strlen(head);
        for (;;) {
            while (*q == ' ' || *q == '\t')
                q++;
            if (q[0] == '\\' && q[1] == '\n') {
                q += 2;
                continue;
            }
            if (!*q || *q == '\n' || *q == '`' || *q == '>' || *q == ';' || *q == '&')
                break;
            const char *e = q;
            while (*e && *e != ' ' && *e != '\t' && *e != '\n' && *e != '`')
                e++;
            size_t n = (size_t)(e - q);
            if (memchr(q, '/', n) && q[0] != '-' && q[0] != '"' && q[0] != '$')
                add(out, q, n);
            q = e;
        }
    }
}

/* path is a name of ns, or a directory holding one. */
static int covered(const struct names *ns, const char *path)
{
    size_t n = strlen(path);
    while (n > 0 && path[n - 1] == '/')
        n--;
    for (int i = 0; i < ns->n; i++)
        if (strncmp(ns->v[i], path, n) == 0 && (ns->v[i][n] == '\0' || ns->v[i][n] == '/'))
            return 1;
    return 0;
}

/* The whole file (the docs are longer than h_file_text reads). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    do {
        if (len + 4096 + 1 > cap) {
            cap = 2 * cap + 4096 + 1;
            char *grown = realloc(buf, cap);
            ck_assert_ptr_nonnull(grown);
            buf = grown;
        }
        n = fread(buf + len, 1, 4096, f);
        len += n;
    } while (n > 0);
    fclose(f);
    buf[len] = '\0';
    return buf;
}

/* The demo's targets and what command 1 makes besides. The targets of
 * its first ninja command, which every build has (the later ones add
 * the cameras, with -Dcameras), are ones this build knows. */
static void command_one(struct names *ns)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tools/kenaf-demo", src_root);
    char *demo = slurp(path);
    const char *head = "ninja -C \"$build\" ";
    char *first = strstr(demo, head), *second = first ? strstr(first + 1, head) : NULL;
    if (second)
        *second = '\0';
    ninja_targets(demo, "\"$build\"", ns);
    int always = ns->n;
    ck_assert_msg(always >= 3, "found %d ninja targets in tools/kenaf-demo", always);
    for (int i = 0; i < always; i++) {
        char cmd[4096 + 2 * NAME_LEN];
        snprintf(cmd, sizeof cmd, "ninja -C '%s' -t query '%s' >/dev/null 2>&1", build_root,
                 ns->v[i]);
        ck_assert_msg(system(cmd) == 0, "tools/kenaf-demo builds %s, which the build does not know",
                      ns->v[i]);
    }
    if (second) {
        *second = 'n';
        ninja_targets(second, "\"$build\"", ns);
    }
    free(demo);
    /* configured by `meson setup`, and linked by every example */
    static const char *const also[] = { "tools/kenaf-sim-run", "libkenaf_sim/libkenaf.so.1" };
    for (size_t i = 0; i < sizeof also / sizeof also[0]; i++)
        add(ns, also[i], strlen(also[i]));
}

/* The build/main paths of one document that neither command 1 nor the
 * document's own ninja commands build, appended to bad. */
static void check_doc(const char *name, const struct names *cmd1, char *bad, size_t badlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", src_root, name);
    char *text = slurp(path);
    struct names own = { .n = 0 };
    ninja_targets(text, "build/main", &own);
    const char *pre = "build/main/";
    for (const char *p = strstr(text, pre); p; p = strstr(p + 1, pre)) {
        const char *q = p + strlen(pre), *e = q;
        while (path_char(*e))
            e++;
        while (e > q && (e[-1] == '.' || e[-1] == '/'))
            e--; /* a full stop or a trailing slash in the prose */
        char rel[NAME_LEN];
        size_t n = (size_t)(e - q);
        if (n == 0 || n >= sizeof rel)
            continue;
        memcpy(rel, q, n);
        rel[n] = '\0';
        if (!covered(cmd1, rel) && !covered(&own, rel)) {
            size_t used = strlen(bad);
            snprintf(bad + used, badlen - used, "\n  %s: build/main/%s", name, rel);
        }
    }
    free(text);
}

START_TEST(docs_name_what_command_one_builds)
{
    struct names cmd1 = { .n = 0 };
    command_one(&cmd1);
    static char bad[8192];
    bad[0] = '\0';
    check_doc("README.md", &cmd1, bad, sizeof bad);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/docs", src_root);
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int docs = 0;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".md") != 0)
            continue;
        char name[512];
        snprintf(name, sizeof name, "docs/%s", e->d_name);
        check_doc(name, &cmd1, bad, sizeof bad);
        docs++;
    }
    closedir(d);
    ck_assert_int_gt(docs, 5);
    ck_assert_msg(bad[0] == '\0',
                  "paths README command 1 (tools/kenaf-demo) does not build, and no "
                  "\"ninja -C build/main ...\" in their page does:%s",
                  bad);
}
END_TEST

/* The reader itself: continuations, options and redirections skipped. */
START_TEST(reads_ninja_lines)
{
    struct names ns = { .n = 0 };
    ninja_targets("x\n    ninja -C \"$build\" -j \"${KENAF_JOBS:-2}\" daemon/kenaf-simd \\\n"
                  "        examples/square >/dev/null\n"
                  "ninja -C \"$build\" cameras/process/kenaf-cameras\n",
                  "\"$build\"", &ns);
    ck_assert_int_eq(ns.n, 3);
    ck_assert_str_eq(ns.v[0], "daemon/kenaf-simd");
    ck_assert_str_eq(ns.v[1], "examples/square");
    ck_assert_str_eq(ns.v[2], "cameras/process/kenaf-cameras");
    ck_assert(covered(&ns, "examples/square"));
    ck_assert(covered(&ns, "examples"));
    ck_assert(!covered(&ns, "examples/teleop"));
    ck_assert(!covered(&ns, "example"));
}
END_TEST

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_build_paths SOURCE_ROOT BUILD_ROOT\n");
        return 2;
    }
    src_root = argv[1];
    build_root = argv[2];
    Suite *s = suite_create("docs build paths");
    TCase *tc = tcase_create("paths");
    tcase_add_test(tc, reads_ninja_lines);
    tcase_add_test(tc, docs_name_what_command_one_builds);
    suite_add_tcase(s, tc);
    return h_run_suite(s);
}
