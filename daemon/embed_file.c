/* Build-time tool: turns a file (the config schema) into a C source that
 * defines `const char SYMBOL[]` (NUL-terminated) and `SYMBOL_len`, so the
 * daemon carries its schema and needs no data file at run time.
 * Usage: embed_file INPUT OUTPUT SYMBOL */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s INPUT OUTPUT SYMBOL\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (in == NULL) {
        perror(argv[1]);
        return 1;
    }
    FILE *out = fopen(argv[2], "w");
    if (out == NULL) {
        perror(argv[2]);
        fclose(in);
        return 1;
    }
    const char *sym = argv[3];
    fprintf(out, "/* Generated from %s by embed_file; edit the source file instead. */\n", argv[1]);
    fprintf(out, "#include <stddef.h>\n\n");
    fprintf(out, "extern const char %s[];\nextern const size_t %s_len;\n\n", sym, sym);
    fprintf(out, "const char %s[] = {", sym);
    size_t n = 0;
    int ch;
    while ((ch = fgetc(in)) != EOF) {
        fprintf(out, "%s0x%02x,", n % 12 == 0 ? "\n    " : " ", (unsigned)ch);
        n++;
    }
    fprintf(out, "%s0x00\n};\n\nconst size_t %s_len = %zu;\n", n % 12 == 0 ? "\n    " : " ", sym,
            n);
    if (ferror(in)) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        fclose(in);
        fclose(out);
        remove(argv[2]);
        return 1;
    }
    fclose(in);
    if (fclose(out) != 0) {
        fprintf(stderr, "%s: %s\n", argv[2], strerror(errno));
        remove(argv[2]);
        return 1;
    }
    return 0;
}
