/* log.h: the opt-in log (convcat.h, convcat_set_log_callback): nothing is
 * formatted or printed unless a callback is set or CONVCAT_LOG=1. */
#ifndef CONVCAT_LOG_H
#define CONVCAT_LOG_H

#include <stdbool.h>

#include "convcat.h"

/* Is anyone listening?  Check before building an expensive line. */
bool cvc_log_enabled(void);

/* One line (no newline) to the callback, or to stderr under CONVCAT_LOG=1, prefixed "convcat: ". */
void cvc_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The problem in one short phrase, "fprop 2D bf16 x bf16 -> bf16, N 1 H 56 W 56 C 64 -> K 64, filter 3x3,
 * pad 1/1 1/1, stride 1 1, dilation 1 1". */
void cvc_problem_phrase(const convcat_problem *p, char *buf, size_t n);

#endif
