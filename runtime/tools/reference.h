/* reference.h: the parameter blocks of the GPU reference kernels (reference.cu)
 * and the verifier's error bounds, shared by the CUDA side, the C side
 * (verify.c) and the CPU test of the bounds (tests/test_verify.c). */
#ifndef CONVCAT_REFERENCE_H
#define CONVCAT_REFERENCE_H

#include <math.h>

#ifdef __CUDACC__
#define CVC_REF_HD __host__ __device__
#else
#define CVC_REF_HD
#endif

/* One convolution in forward terms, whatever the op: x is N x D x H x W x C,
 * w is K x T x R x S x (C / groups), y is N x Z x P x Q x K (cross-correlation;
 * filter k sees the channels of group k / (K / groups)).
 * The types are the convcat_dtype of each tensor as stored; an op's output
 * type is not read (the reference writes f32). */
typedef struct cvc_ref_conv {
    int n, d, h, w, c, k, t, r, s;   /* forward-terms extents */
    int z, p, q;                     /* output extents */
    int pad_d, pad_h, pad_w;         /* lower padding */
    int str_d, str_h, str_w;
    int dil_d, dil_h, dil_w;
    int x_type, w_type, y_type;      /* convcat_dtype of x, w and y (dy for dgrad and wgrad) */
    int groups;                      /* >= 1, dividing C and K */
} cvc_ref_conv;

/* ---- the error bounds --------------------------------------------------------------------------
 *
 * Each output is act(v) with v = alpha * sum_j t_j + bias + beta * c, t_j = a_j * b_j the K
 * products of its sum (K: the op's GEMM K, verify.c's terms()).  The reference kernels give, per
 * output, in one pass over the terms: ref = sum t_j, mag = sum |t_j| (the convolution run on
 * |A| and |B|) and sq = sum t_j^2.  Errors are measured against these, never against the
 * result alone: a sum that cancels (|ref| much smaller than mag) has the rounding errors of
 * its terms, not of its value.  With
 *
 *   M = |alpha| mag,  S = |alpha| sqrt(sq + ref^2),  P = |alpha ref| + |bias| + |beta c|,
 *   e = act(v) the reference (v from ref in f32, as the kernels compute it),
 *
 * (sqrt(sq) is the size of a random walk of the terms' errors, ref^2 covers errors in
 * proportion to the sum itself: tf32's truncation, below)
 *
 * element-wise, every finite output must satisfy
 *
 *   |y - e| <= B = (1 + u_out) (L (conv_elem M + epi P + epi_tiny) + act (|v| + |e|)) + u_out |e| + tiny_out
 *
 * and norm-wise, over the finite outputs,
 *
 *   ||y - e|| <= (1 + u_out) ||L (conv_norm S + epi P + epi_tiny) + act (|v| + |e|)|| + u_out ||e|| + tiny_out sqrt(count)
 *
 * The element bound is a worst case (it catches one wrong element: a NaN, a stray value); the
 * norm bound is the size the rounding errors of random data add up to, with a wide margin,
 * and catches what is wrong a little everywhere (a missing filter tap or channel, a 1% error).
 * The constants (cvc_ref_bounds_for), with u32 = 2^-24 the unit roundoff of f32:
 *
 * - Inputs: f16 and bf16 operands are read as stored by both sides, and their products are
 *   exact in f32 (11 + 11 bits <= 24); f32 operands are multiplied exactly in the reference
 *   (double) and inside the kernels' FMAs.  tf32 operands are f32 in memory, and the tensor
 *   cores drop their low 13 mantissa bits (truncation): each operand is off by less than
 *   2^-10 of itself, each product by less than u_prod = 2^-9 + 2^-20 of |t_j|, so the sum by
 *   less than u_prod mag: conv_elem's first term.  Norm-wise the truncations shrink each
 *   product by 2 ln2 2^-11 (6.8e-4) on average, with a spread of 3e-4: about 4.9e-4 S over
 *   many outputs, at most 1.5e-3 S for a single output of a few terms in 500,000 random
 *   ones; conv_norm takes 1.5 u_prod (2.9e-3), which for sums of one or two terms is the
 *   worst case itself (u_prod mag <= u_prod sqrt(2) S).
 * - Accumulation: the reference sums in double (its own error is nothing beside the
 *   kernel's); the kernels sum in f32, in their own order, the tensor cores truncating each
 *   add.  The worst case grows as K u32 mag, but the terms here are random with random
 *   signs (uniform in [-1, 1]) and the errors of the adds grow as a random walk: in a model
 *   truncating after every single product (the tensor cores add 8 or 16 at a time, the
 *   direct kernels round to nearest) an element's error stayed under 3 sqrt(K) u32 mag;
 *   conv_elem allows 16 sqrt(K) u32.  Truncation biases each partial sum toward zero, so
 *   norm-wise the error grows as K: 0.29 K u32 S in that model, 0.02 K u32 S with 16
 *   products an add; conv_norm allows K u32 / 4 + 8 sqrt(K) u32.
 * - Epilogue: alpha * acc + bias + beta * c in f32, three roundings of at most u32 P on each
 *   side, and ref itself rounded to f32: 8 u32 P.  With a GELU or SiLU, or beta * c, a
 *   kernel may round to the output type on the way, at most u_out P a rounding: sm90a
 *   applies the activation to the stored chunk; the TMA kernels add beta * c to the stored
 *   value of scattered and grouped rows; the swap and halo epilogues store alpha * acc +
 *   bias, add beta * c to it and store again, then apply the activation and store a third
 *   time.  epi = 8 u32 + u_out with one of the two, + 2 u_out with both, 8 u32 with neither
 *   (ReLU of a rounded value is the rounded ReLU).  Each of those roundings may also land in
 *   the output type's subnormals, off by up to tiny_out whatever the value (f16: 2^-25):
 *   epi_tiny = tiny_out a rounding.  (Seen: an f16 output of a fully padded window, v = beta c =
 *   7.6e-7, rounded before its GELU and after, 3.7e-8 off where the bound without it was 3.1e-8.)
 *   The activation's error passes through
 *   its slope L (relu 1, gelu 1.13, silu 1.10); evaluating it costs at most a few ulps of
 *   erff or __expf (2 + 1.2 |v| ulps; past |v| = 50 the result saturates or underflows):
 *   act = 64 u32 with gelu and silu, 0 with relu or none.
 * - Output: one rounding to the output type, to nearest: u_out = 2^-11 (f16), 2^-8 (bf16),
 *   2^-24 (f32) of the value (which is e give or take the bound above: the (1 + u_out)
 *   factor), plus half the type's smallest subnormal, tiny_out, for values below the
 *   normal range.
 *
 * A wrong element among millions fails the element bound: 100.0 where the bound is about
 * 2^-9 mag for tf32 (mag about K / 4) or u_out |e| for f16/bf16.  A kernel skipping one of C
 * channels leaves an error of about S / sqrt(2 C) everywhere, one of T taps S / sqrt(2 T):
 * over the norm bound for any type up to C = 16,000 or so with a 3x3 filter (the
 * accumulation's allowance grows with K = 9 C). */

enum { CVC_REF_F16 = 1, CVC_REF_BF16 = 2, CVC_REF_TF32 = 3, CVC_REF_F32 = 4 };
enum { CVC_REF_ACT_NONE = 0, CVC_REF_ACT_RELU = 1, CVC_REF_ACT_GELU = 2, CVC_REF_ACT_SILU = 3 };

typedef struct cvc_ref_bounds {
    double conv_elem;   /* element-wise coefficient of M */
    double conv_norm;   /* norm-wise coefficient of S */
    double epi;         /* coefficient of P: the epilogue's f32 arithmetic */
    double epi_tiny;    /* the epilogue's roundings to the output type below its normal range */
    double act;         /* coefficient of |v| + |e|: evaluating the activation */
    double slope;       /* L: the activation's largest slope */
    double u_out;       /* the output type's unit roundoff */
    double tiny_out;    /* half the output type's smallest subnormal */
} cvc_ref_bounds;

/* The partial sums of a check, one per output added by cvc_ref_check_one. */
typedef struct cvc_ref_sums {
    double err2;        /* sum (y - e)^2 over the finite outputs */
    double ref2;        /* sum e^2 */
    double norm2;       /* sum of the norm bound's per-output term, squared */
    double checked;     /* finite outputs (y and e) */
    double nonfinite;   /* outputs with y or e NaN or infinite */
    double outliers;    /* finite outputs over their element bound */
    double worst;       /* the largest |y - e| / B */
} cvc_ref_sums;

#define CVC_REF_SUMS 7   /* doubles in cvc_ref_sums */

/* The bounds of a check: operand types, output type, K (terms of the longest sum), the
 * activation (convcat_dtype and convcat_activation values) and whether beta * c is added. */
static inline cvc_ref_bounds cvc_ref_bounds_for(int a_type, int b_type, int out_type, double terms, int act,
                                                int with_c)
{
    const double u32 = ldexp(1.0, -24), root = sqrt(terms > 1 ? terms : 1);
    const double ua = a_type == CVC_REF_TF32 ? ldexp(1.0, -10) : 0.0;
    const double ub = b_type == CVC_REF_TF32 ? ldexp(1.0, -10) : 0.0;
    const double u_prod = ua + ub + ua * ub;
    cvc_ref_bounds b;
    b.conv_elem = u_prod + 16.0 * root * u32;
    b.conv_norm = 1.5 * u_prod + (terms / 4.0 + 8.0 * root) * u32;
    b.act = act == CVC_REF_ACT_GELU || act == CVC_REF_ACT_SILU ? 64.0 * u32 : 0.0;
    b.slope = act == CVC_REF_ACT_GELU ? 1.13 : act == CVC_REF_ACT_SILU ? 1.10 : 1.0;
    switch (out_type) {
    case CVC_REF_F16: b.u_out = ldexp(1.0, -11), b.tiny_out = ldexp(1.0, -25); break;
    case CVC_REF_BF16: b.u_out = ldexp(1.0, -8), b.tiny_out = ldexp(1.0, -134); break;
    default: b.u_out = ldexp(1.0, -24), b.tiny_out = ldexp(1.0, -150);
    }
    const int roundings = (b.act > 0 || with_c) + (b.act > 0 && with_c);   /* before the last one */
    b.epi = 8.0 * u32 + roundings * b.u_out;
    b.epi_tiny = roundings * b.tiny_out;
    return b;
}

/* Add one output to s: y the kernel's, e the reference, v the reference before the
 * activation, mag and sq the sums of |t_j| and t_j^2, p = |alpha ref| + |bias| + |beta c|. */
CVC_REF_HD static inline void cvc_ref_check_one(const cvc_ref_bounds *b, float y, float e, float v, float alpha,
                                                float ref, float mag, float sq, double p, cvc_ref_sums *s)
{
    if (!isfinite(y) || !isfinite(e)) {
        s->nonfinite += 1.0;
        return;
    }
    const double a = fabs((double)alpha), m = a * mag, sn = a * sqrt((double)sq + (double)ref * ref);
    const double act = b->act * (fabs((double)v) + fabs((double)e));
    const double elem = (1.0 + b->u_out) * (b->slope * (b->conv_elem * m + b->epi * p + b->epi_tiny) + act) +
                        b->u_out * fabs((double)e) + b->tiny_out;
    const double norm = b->slope * (b->conv_norm * sn + b->epi * p + b->epi_tiny) + act;
    const double d = fabs((double)y - (double)e);
    s->err2 += d * d;
    s->ref2 += (double)e * e;
    s->norm2 += norm * norm;
    s->checked += 1.0;
    if (d > elem)
        s->outliers += 1.0;
    if (d / elem > s->worst)
        s->worst = d / elem;
}

/* The norm bound on ||y - e|| of a check's sums. */
CVC_REF_HD static inline double cvc_ref_norm_bound(const cvc_ref_bounds *b, const cvc_ref_sums *s)
{
    return (1.0 + b->u_out) * sqrt(s->norm2) + b->u_out * sqrt(s->ref2) + b->tiny_out * sqrt(s->checked);
}

#endif
