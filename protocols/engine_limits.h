/* How many robots one kenaf-engine world takes: the engine refuses the
 * INIT beyond it (KENAF {Cmd Init} {Status Failed}) and kenaf-simd
 * --check-config refuses a config that asks one engine for more. The
 * world's storage and collision space grow without bound; the number is
 * the CPU budget: the largest fleet on flat ground that one core of the
 * reference machine steps at real time or faster (docs/performance.md,
 * "Fleets: robots in one engine world"). */
#ifndef KN_PROTOCOLS_ENGINE_LIMITS_H
#define KN_PROTOCOLS_ENGINE_LIMITS_H

#define KN_ENGINE_MAX_ROBOTS 48

#endif
