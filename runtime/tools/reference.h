/* reference.h: the parameter block of the GPU reference kernels (reference.cu),
 * shared by the CUDA side and the C side (verify.c). */
#ifndef CONVCAT_REFERENCE_H
#define CONVCAT_REFERENCE_H

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

#endif
