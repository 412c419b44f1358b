/* The built-in engine's trial line (docs/engine.md, "Trials"): one
 * `KENAF {Cmd Trial} {Status OK} ...` line carries a judged trial's state
 * from kenaf-engine to kenaf-simd, in the fields of KRP/1's TRIAL
 * (krp.h), so the daemon relays it unchanged. Sans-I/O: the engine
 * formats it, the daemon parses it; both through the USARSim codec. */
#ifndef KN_USARSIM_TRIAL_H
#define KN_USARSIM_TRIAL_H

#include <stddef.h>

#include "krp.h"
#include "usarsim_codec.h"

/* Writes the line (CR LF included) into buf; its length, or a negative
 * enum kn_usar_result (a name with a blank or a brace, buf too small). */
int kn_usartrial_format(const struct kn_krp_trial *t, char *buf, size_t cap);

/* A tokenized `KENAF {Cmd Trial}` line into t: KN_USAR_OK, or
 * KN_USAR_EMISSING / KN_USAR_ERANGE / a parse error for a field that is
 * missing or out of its wire range (t is then unspecified). */
enum kn_usar_result kn_usartrial_parse(const struct kn_usar_line *l, struct kn_krp_trial *t);

#endif
