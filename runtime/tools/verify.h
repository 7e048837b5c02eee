/* verify.h: run a convcat kernel on fresh random data and check it against the
 * GPU reference (reference.cu).  Used by `convcat run --verify` and the GPU tests.
 *
 * Every op (fprop, dgrad, wgrad), in forward terms: x, w and y are allocated
 * with the problem's extents; the op's two inputs are filled (fprop: x, w;
 * dgrad: y = dy, w; wgrad: y = dy, x), its output (fprop y, dgrad x, wgrad w)
 * is poisoned with NaN and compared; the plan's workspace_bytes of device
 * memory is allocated and passed as convcat_tensors.workspace.  Types: the
 * output is out_type, a_type the GEMM A operand (fprop x, dgrad and wgrad dy),
 * b_type the B operand (fprop and dgrad w, wgrad x).
 *
 * The check (reference.h): every output within its element bound, set by the
 * magnitudes of its terms (the convolution run on |A| and |B|) and the rounding
 * of the types, and the error's norm within the norm bound. */
#ifndef CONVCAT_VERIFY_H
#define CONVCAT_VERIFY_H

#include "convcat.h"
#include "reference.h"

typedef struct cvc_verify {
    size_t index;        /* the kernel that ran */
    double rel_err;      /* ||y - ref|| / ||ref|| over the finite outputs (||y - ref|| where ref is 0) */
    double tolerance;    /* the norm bound on rel_err: ||y - ref|| bounded by the terms' magnitudes and
                            the types' rounding, over ||ref|| (larger where the sums cancel) */
    long long nonfinite; /* outputs (or references) NaN or Inf (the output is poisoned with NaN before the run) */
    long long outliers;  /* outputs with |y - ref| over their element bound */
    double worst;        /* the largest |y - ref| / element bound (over 1: an outlier) */
    size_t workspace_bytes; /* the plan's workspace, allocated and passed */
    int groups_per_cta;  /* the plan's (convcat_plan_info): gather packs of groups */
    int cluster;         /* the plan's CTAs a cluster (convcat_plan_info) */
    int splits;          /* the plan's split-K slices (1: unsplit) */
    int split_sums;      /* where they are added (convcat_split_sums) */
    int passed;          /* rel_err <= tolerance, no non-finite output, no outlier */
} cvc_verify;

/* Deliberate damage to the output after the kernel ran, to show the check can fail. */
typedef enum cvc_sabotage {
    CVC_SABOTAGE_NONE = 0,
    CVC_SABOTAGE_UNWRITTEN = 1,   /* one output element poisoned again (NaN) */
    CVC_SABOTAGE_WRONG = 2        /* one output element set to 100 */
} cvc_sabotage;

/* Make device `ordinal`'s primary context current; CONVCAT_ERR_NO_DRIVER or
 * CONVCAT_ERR_NO_DEVICE (with convcat_last_error()) where there is no GPU. */
convcat_status cvc_verify_device(int ordinal, char *name, size_t name_size);

/* The number of CUDA devices (0 where there is no driver: CONVCAT_ERR_NO_DRIVER). */
convcat_status cvc_verify_device_count(int *count);

/* What the epilogue adds to the convolution: act(alpha * conv + bias + beta * c). */
typedef struct cvc_epilogue {
    float alpha, beta;
    int bias;                      /* 1: a random per-channel bias */
    convcat_activation activation;
} cvc_epilogue;

/* The bounds a check of p with epilogue epi uses (reference.h: cvc_ref_bounds_for). */
cvc_ref_bounds cvc_verify_bounds(const convcat_problem *p, const cvc_epilogue *epi);

/* The verdict of a check's sums within `bounds`: rel_err, tolerance, nonfinite, outliers,
 * worst and passed of v (nothing else). */
void cvc_verify_decide(const cvc_ref_bounds *bounds, const cvc_ref_sums *s, cvc_verify *v);

/* Plan (index or CONVCAT_AUTO), run once and compare.  Errors of the plan or
 * the launch are returned as they are; a wrong answer is CONVCAT_OK with
 * out->passed == 0.  `sabotage` damages one output element (seeded position)
 * between the kernel and the comparison. */
convcat_status cvc_verify_run(const convcat_catalog *cat, const convcat_problem *p, size_t index,
                              unsigned seed, const cvc_epilogue *epi, cvc_sabotage sabotage,
                              cvc_verify *out);

/* Two runs of one fprop plan chained on one stream, the second reading what the first writes:
 * y1 = conv(x, w), then y2 = conv(y1, w), launched back to back without a synchronisation
 * between them (sm90a kernels launch with programmatic dependent launch: the second may start
 * before the first ends and must wait for it before it reads y1).  y1 and y2 are poisoned
 * with NaN first; each is checked against the reference of its own input.  p must map a
 * tensor onto its own shape: C == K, the output's spatial extents equal the input's, and
 * a_type == out_type.  `out` is the second run's check; *first_passed the first's. */
convcat_status cvc_verify_chained(const convcat_catalog *cat, const convcat_problem *p, size_t index, unsigned seed,
                                  cvc_verify *out, int *first_passed);

/* convcat_autotune on fresh random tensors of p (allocated and freed here),
 * with a workspace as large as the largest any runnable kernel's plan asks for. */
convcat_status cvc_verify_autotune(const convcat_catalog *cat, const convcat_problem *p, convcat_tune_cache *cache,
                                   int iters, size_t *index_out, double *ms_out);

/* Median milliseconds of `iters` launches of a plan for p (after warm-up), on
 * random data; the tensors and the plan's workspace are allocated and freed here. */
convcat_status cvc_time_run(const convcat_catalog *cat, const convcat_problem *p, size_t index, int iters,
                            double *ms_out, size_t *index_out);

/* A problem's tensors on the current device, for runs of the caller's own plans on its own
 * streams (the multi-GPU test): x, w, y, the reference's buffers and a workspace of
 * workspace_bytes, allocated in the current context, which must be current in every call.
 * The reference kernels serve every context (loaded once, as a CUlibrary).
 *
 *   make: allocate (nothing filled); fill: fresh random inputs from `seed` and the output poisoned with NaN,
 *   finished when it returns; tensors: for convcat_plan_run (alpha 1, beta 0, no bias or
 *   activation); check: after the caller has synchronized its runs, the output against the
 *   reference of the inputs (out->index is CONVCAT_AUTO: the caller knows its plan);
 *   output_poisoned: whether the output is still all NaN at its first and last word (a run
 *   that was refused wrote nothing). */
typedef struct cvc_verify_case cvc_verify_case;
convcat_status cvc_verify_case_make(const convcat_problem *p, size_t workspace_bytes, cvc_verify_case **out);
convcat_status cvc_verify_case_fill(cvc_verify_case *c, unsigned seed);
convcat_tensors cvc_verify_case_tensors(const cvc_verify_case *c);
convcat_status cvc_verify_case_check(cvc_verify_case *c, cvc_verify *out);
convcat_status cvc_verify_case_output_poisoned(cvc_verify_case *c, int *poisoned);
void cvc_verify_case_free(cvc_verify_case *c);

#endif
