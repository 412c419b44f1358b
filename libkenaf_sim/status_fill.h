/* KRP/1 STATUS (wire units) to the public hrt_status (API units), and the
 * text hrt_show_status prints. Pure: no I/O, no locking. */
#ifndef KN_STATUS_FILL_H
#define KN_STATUS_FILL_H

#include <stddef.h>

#include "kenaf.h"
#include "krp.h"

void kn_status_fill(const struct kn_krp_status *in, hrt_status *out);

/* Names of the set flag bits, space separated ("BACKEND_UP SIMULATED"),
 * unknown bits as hex; "none" when no bit is set. */
void kn_status_flag_names(uint32_t flags, char *buf, size_t cap);

/* The block hrt_show_status prints (several lines, ending in '\n'). */
void kn_status_format(const hrt_status *st, const char *robot_name, char *buf, size_t cap);

#endif
