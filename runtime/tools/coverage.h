/* coverage.h: `convcat coverage` (coverage.c). */
#ifndef CONVCAT_COVERAGE_H
#define CONVCAT_COVERAGE_H

#include <stdio.h>

#include "convcat.h"

/* Every row of every problem file for every type: printed, or as one JSON document.  0 when every
 * row and type has a kernel, 1 when some have none, 2 for an unreadable file or row. */
int cvc_coverage(convcat_catalog *const *cats, int ncats, const char *const *files, int nfiles,
                 const convcat_dtype *dtypes, int ndtypes, convcat_arch arch, int json, FILE *out);

#endif
