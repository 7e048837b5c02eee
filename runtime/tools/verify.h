/* verify.h: run a convcat kernel on fresh random data and check it against the
 * GPU reference (reference.cu).  Used by `convcat run --verify` and the GPU tests. */
#ifndef CONVCAT_VERIFY_H
#define CONVCAT_VERIFY_H

#include "convcat.h"

typedef struct cvc_verify {
    size_t index;        /* the kernel that ran */
    double rel_err;      /* ||y - ref|| / ||ref|| over the finite outputs */
    double tolerance;    /* bound for the output type */
    long long nonfinite; /* outputs left NaN/Inf (the output is poisoned with NaN before the run) */
    int passed;
} cvc_verify;

/* Make device `ordinal`'s primary context current; CONVCAT_ERR_NO_DRIVER or
 * CONVCAT_ERR_NO_DEVICE (with convcat_last_error()) where there is no GPU. */
convcat_status cvc_verify_device(int ordinal, char *name, size_t name_size);

/* Plan (index or CONVCAT_AUTO), run once and compare.  Errors of the plan or
 * the launch are returned as they are; a wrong answer is CONVCAT_OK with
 * out->passed == 0. */
convcat_status cvc_verify_run(const convcat_catalog *cat, const convcat_problem *p, size_t index,
                              unsigned seed, float alpha, float beta, cvc_verify *out);

/* Median milliseconds of `iters` launches of a plan for p (after warm-up), on
 * random data; the tensors are allocated and freed here. */
convcat_status cvc_time_run(const convcat_catalog *cat, const convcat_problem *p, size_t index, int iters,
                            double *ms_out, size_t *index_out);

#endif
