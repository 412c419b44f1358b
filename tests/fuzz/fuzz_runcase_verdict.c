/* libFuzzer target for kenaf-sim-case's reading of kenaf-engine's verdict
 * file (tools/runcase/verdict.c): the first byte picks how the program
 * ended (exited or not, its status), the rest is the file. Any bytes are
 * judged without a crash, to one of the known failure modes or the
 * file's own mode= word, every field NUL-terminated within its room. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "verdict.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    bool exited = data[0] & 1u;
    int cstatus = data[0] >> 1;
    /* a copy of just the bytes given, so reading past them is seen */
    char *text = malloc(size - 1 ? size - 1 : 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    struct kn_runcase_outcome o;
    memset(&o, 0x55, sizeof o);
    kn_runcase_judge(text, size - 1, exited, cstatus, &o);
    if (!memchr(o.status, '\0', sizeof o.status) || !memchr(o.why, '\0', sizeof o.why) ||
        !memchr(o.mode, '\0', sizeof o.mode) || !memchr(o.sim, '\0', sizeof o.sim))
        abort();
    char own[sizeof o.mode];
    kn_runcase_verdict_get(text, size - 1, "mode", own, sizeof own);
    static const char *const modes[] = { "none",  "crash", "tip-over",  "time-out",
                                         "limit", "stall", "criterion", "error" };
    bool known = own[0] && strcmp(o.mode, own) == 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        known |= strcmp(o.mode, modes[i]) == 0;
    if (!known)
        abort();
    free(text);
    return 0;
}
