/* reference.h: the parameter block of the GPU reference kernels (reference.cu),
 * shared by the CUDA side and the C side (verify.c). */
#ifndef CONVCAT_REFERENCE_H
#define CONVCAT_REFERENCE_H

typedef struct cvc_ref_conv {
    int n, d, h, w, c, k, t, r, s;   /* forward-terms extents */
    int z, p, q;                     /* output extents */
    int pad_d, pad_h, pad_w;         /* lower padding */
    int str_d, str_h, str_w;
    int dil_d, dil_h, dil_w;
    int a_type, b_type;              /* convcat_dtype of x and w */
} cvc_ref_conv;

#endif
