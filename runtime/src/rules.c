/* rules.c: can a kernel run a problem (can_implement), and if not, why.
 *
 * The problem rules of DESIGN.md and of the seed collective, each returning a
 * sentence and the rule it is (the query ranks refusals by rule).  A problem
 * is either refused here (or by the device checks of convcat_plan_create) or
 * computed correctly: nothing a kernel cannot do may reach it.  What a kernel
 * can do comes from its index record: its family, flags, alignment, group
 * support and geometry, as the generator computed them.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const axis_name[3] = {"D", "H", "W"};

/* The most stride phases a strided dgrad may have (64 x 64). */
#define CVC_MAX_PHASES 4096

#define REFUSE(r, ...)                               \
    do {                                             \
        cvc_say(why, n, __VA_ARGS__);                \
        *rule = (r);                                 \
        return CONVCAT_ERR_UNSUPPORTED;              \
    } while (0)

static convcat_status check_operands(const cvc_entry *e, const cvc_view *v, char *why, size_t n, cvc_rule *rule)
{
    static const char *const role[3][2] = {{"activations", "filters"}, {"dy", "filters"}, {"dy", "activations"}};
    cvc_operand_desc a, b;
    cvc_tma_operands(e, v, &a, &b);
    const cvc_operand_desc *ops[2] = {&a, &b};
    char tma_why[160];
    for (int i = 0; i < 2; ++i)
        if (ops[i]->im2col ? !cvc_im2col_desc_valid(&ops[i]->i, tma_why, sizeof tma_why)
                           : !cvc_tiled_desc_valid(&ops[i]->t, tma_why, sizeof tma_why))
            REFUSE(CVC_RULE_TMA, "%s: %s", role[e->k.op][i], tma_why);
    if (e->k.op == CONVCAT_DGRAD && v->strided) {   /* every stride phase reads dy through its own box */
        cvc_phase_classes boxes;
        cvc_dgrad_phase_classes(v, CVC_PHASE_BOX, &boxes);
        for (int i = 0; i < boxes.visits; ++i) {
            cvc_dgrad_phase ph;
            cvc_dgrad_phase_visit(v, &boxes, i, &ph);
            cvc_im2col_desc d;
            cvc_tma_dgrad_a(e, v, &ph, &d);
            if (!cvc_im2col_desc_valid(&d, tma_why, sizeof tma_why))
                REFUSE(CVC_RULE_TMA, "dy, stride phase %d: %s", cvc_dgrad_phase_index(v, &ph), tma_why);
        }
    }
    cvc_tiled_desc y;
    cvc_tma_output(e, v, 1, &y);
    if (!cvc_tiled_desc_valid(&y, tma_why, sizeof tma_why))
        REFUSE(CVC_RULE_TMA, "output: %s", tma_why);
    if (cvc_key_dynamic(&e->k)) {   /* a dynamic cluster's second descriptor set: the fallback shape's */
        const cvc_entry f = cvc_entry_fallback(e);
        char fb_why[176];
        if (check_operands(&f, v, fb_why, sizeof fb_why, rule) != CONVCAT_OK)
            REFUSE(*rule, "fallback cluster %dx%d: %s", e->k.fallback_m, e->k.fallback_n, fb_why);
    }
    return CONVCAT_OK;
}

/* Whether the kernel's group_c_mask takes c channels per group. */
static bool mask_takes(const cvc_entry *e, int64_t c)
{
    return c >= 1 && (c & (c - 1)) == 0 && c <= 256 && (e->group_c_mask >> __builtin_ctzll((unsigned long long)c) & 1u);
}

/* The mask's channel counts from bit `first` on, "2, 4, 8". */
static void mask_list(const cvc_entry *e, int first, char *taken, size_t size)
{
    size_t used = 0;
    taken[0] = 0;
    for (int i = first; i < 32 && used < size; ++i)
        if (e->group_c_mask >> i & 1u) {
            const int w = snprintf(taken + used, size - used, "%s%u", used ? ", " : "", 1u << i);
            used = w < 0 ? size : used + (size_t)w;
        }
}

/* Does a kernel of groups_mode packed take groups of c channels and k filters: a tile column within
 * one group (k a multiple of tile N), or a pack of tile N / k groups with k and c in its mask and the
 * pack's channels within tile K; c a multiple of the filters' 16-byte TMA rows either way. */
static bool packed_takes(const cvc_entry *e, int64_t c, int64_t k)
{
    if (c % e->c_align)
        return false;
    if (k % e->k.tile_n == 0)
        return true;
    return e->k.tile_n % k == 0 && mask_takes(e, k) && mask_takes(e, c) && e->k.tile_n / k * c <= e->k.tile_k;
}

int cvc_widening(const cvc_entry *e, const cvc_view *v)
{
    const convcat_problem *p = &v->p;
    if (!cvc_has(e, CVC_F_WIDENS_GROUPS) || p->op != CONVCAT_FPROP || e->k.op != CONVCAT_FPROP || p->groups < 2 ||
        packed_takes(e, v->cg, v->kg))
        return 1;
    /* at least 2 groups left: the kernel takes grouped problems only, and a block-diagonal one is one */
    for (int f = 2; 2 * f <= p->groups && (int64_t)f * v->cg <= e->k.tile_k; f *= 2)
        if (p->groups % f == 0 && packed_takes(e, (int64_t)f * v->cg, (int64_t)f * v->kg))
            return f;
    return 1;
}

/* Grouped problems: a TMA kernel (groups_mode diagonal) takes wgrad, K == C, c = C / groups channels
 * per group in the kernel's group_c_mask, dividing tile N; one of groups_mode packed (schedule
 * grouped) takes fprop with groups > 1 whose tile columns hold whole groups: k = K / groups filters a
 * multiple of tile N, or packs of tile N / k groups with k and c in its mask and the pack's channels
 * within tile K; a direct kernel (depthwise) takes one channel per group (any filters per group), or
 * c = K / groups = C / groups in its mask, at any groups (1 included). */
static convcat_status check_groups(const cvc_entry *e, const cvc_view *v, char *why, size_t n, cvc_rule *rule)
{
    const convcat_problem *p = &v->p;
    const int g = p->groups;
    char taken[64];   /* the catalog holds at most bits 0..8: "1, 2, ..., 256" */
    if (e->groups_mode == CVC_GROUPS_DEPTHWISE) {
        if (v->cg == 1 || (v->kg == v->cg && mask_takes(e, v->cg)))
            return CONVCAT_OK;
        mask_list(e, 1, taken, sizeof taken);
        if (!taken[0])
            REFUSE(CVC_RULE_GROUPS, "groups = %d: C / groups = %d channels per group; a depthwise kernel takes 1",
                   g, v->cg);
        REFUSE(CVC_RULE_GROUPS, "groups = %d: %d channels and %d filters per group; this direct kernel takes one "
               "channel per group, or %s of each", g, v->cg, v->kg, taken);
    }
    if (g == 1 && e->groups_mode == CVC_GROUPS_PACKED)
        REFUSE(CVC_RULE_GROUPS, "groups = 1: this kernel runs grouped problems (its coop twin runs this one)");
    if (g == 1)
        return CONVCAT_OK;
    switch (e->groups_mode) {
    case CVC_GROUPS_ANY:
        return CONVCAT_OK;
    case CVC_GROUPS_DIAGONAL: {
        if (p->k != p->c)
            REFUSE(CVC_RULE_GROUPS, "groups = %d: this kernel's grouped wgrad needs K == C (K = %d, C = %d)", g,
                   p->k, p->c);
        if (!mask_takes(e, v->cg)) {
            mask_list(e, 0, taken, sizeof taken);
            REFUSE(CVC_RULE_GROUPS, "C / groups = %d channels per group: this kernel's grouped wgrad takes %s",
                   v->cg, taken);
        }
        if (e->k.tile_n % v->cg)
            REFUSE(CVC_RULE_GROUPS, "C / groups = %d channels per group do not divide tile N %d", v->cg, e->k.tile_n);
        return CONVCAT_OK;
    }
    case CVC_GROUPS_PACKED: {   /* a tile column reads x at its groups' channels, the filters as (c, taps, K) */
        if (packed_takes(e, v->cg, v->kg))
            return CONVCAT_OK;
        if (v->cg % e->c_align)
            REFUSE(CVC_RULE_GROUPS, "C / groups = %d channels per group: a multiple of %d (the filters' 16-byte TMA "
                   "rows)%s", v->cg, e->c_align,
                   cvc_has(e, CVC_F_WIDENS_GROUPS) ? ", nor does a pack take 2, 4, ... of these groups as one" : "");
        mask_list(e, 0, taken, sizeof taken);
        REFUSE(CVC_RULE_GROUPS, "groups = %d: k = %d filters, c = %d channels a group; a tile column takes one "
               "group of k a multiple of %d, or a pack of groups of k and c in %s within a %d-channel stage", g,
               v->kg, v->cg, e->k.tile_n, taken, e->k.tile_k);
    }
    default:
        REFUSE(CVC_RULE_GROUPS, "groups = %d: this kernel takes groups = 1 (the gather family runs grouped problems; "
               "16-bit fprop and unit-stride dgrad also the grouped schedule)", g);
    }
}

/* The rules of the TMA family: alignment, 32-bit index math, strides, halo reach, descriptors. */
static convcat_status tma_rules(const cvc_entry *e, const cvc_view *v, char *why, size_t n, cvc_rule *rule)
{
    const convcat_problem *p = &v->p;
    const cvc_key *k = &e->k;
    if (p->c % e->c_align)
        REFUSE(CVC_RULE_CHANNELS, "C = %d: channels must be a multiple of %d (16-byte TMA rows of %s and %s)", p->c,
               e->c_align, convcat_dtype_name(p->a_type), convcat_dtype_name(p->out_type));
    if (p->k % e->k_align)
        REFUSE(CVC_RULE_CHANNELS, "K = %d: output channels must be a multiple of %d (16-byte filter and output rows)",
               p->k, e->k_align);
    for (int a = 0; a < 3; ++a)
        if (e->max_stride && p->stride[a] > e->max_stride)
            REFUSE(CVC_RULE_STRIDE, "stride %d along %s: TMA traversal strides are 1..%d", p->stride[a], axis_name[a],
                   e->max_stride);
    if (k->op == CONVCAT_DGRAD && v->strided && !cvc_has(e, CVC_F_SCATTERS))
        REFUSE(CVC_RULE_TILE, "strides (%d, %d, %d): this dgrad kernel has no strided (row-scattering) epilogue "
               "(its warpgroups hold %d accumulators); kernels of smaller tiles run strided problems",
               p->stride[0], p->stride[1], p->stride[2], e->acc_regs);
    if (cvc_has(e, CVC_F_HALO)) {   /* one input tile per output block serves every tap */
        if (p->stride[1] != 1 || p->stride[2] != 1)
            REFUSE(CVC_RULE_STRIDE, "strides (%d, %d): a halo kernel reads each output block's input pixels as one "
                   "tile, at unit stride only", p->stride[1], p->stride[2]);
        if (v->reach[1] > e->halo_reach || v->reach[2] > e->halo_reach)
            REFUSE(CVC_RULE_FILTER, "filter %dx%d at dilation (%d, %d) reaches %lld x %lld pixels past an output "
                   "block: this halo kernel's input tile reaches %d", p->r, p->s, p->dilation[1], p->dilation[2],
                   (long long)v->reach[1], (long long)v->reach[2], e->halo_reach);
    }
    /* The kernel's own coordinates are ints: an input pixel q*stride - pad_lo + s*dilation lies in
     * [-pad_lo, input + pad_hi), so the padded input must fit. */
    for (int a = 3 - p->dims; a < 3; ++a) {
        const int64_t padded = (int64_t)v->in[a] + p->pad_lo[a] + p->pad_hi[a];
        if (padded > INT32_MAX)
            REFUSE(CVC_RULE_INDEX, "the input along %s padded by %d + %d is %lld pixels: past the kernel's 32-bit "
                   "coordinates", axis_name[a], p->pad_lo[a], p->pad_hi[a], (long long)padded);
    }
    /* 32-bit GEMM coordinates inside the kernel, with room for the last cluster's padding tiles. */
    const cvc_gemm *g = &v->gemm;
    const int64_t m_span = g->m + (int64_t)k->tile_m * k->cluster_m;
    static const char *const m_name[3] = {"N*Z*P*Q", "N*D*H*W", "K"};
    if (m_span > INT32_MAX || g->n > INT32_MAX)
        REFUSE(CVC_RULE_INDEX, "GEMM M = %s = %lld exceeds the kernel's 32-bit pixel index", m_name[k->op],
               (long long)g->m);
    if (k->op == CONVCAT_WGRAD && v->pixels + (int64_t)k->tile_k > INT32_MAX)
        REFUSE(CVC_RULE_INDEX, "N*Z*P*Q = %lld pixels exceed the wgrad kernel's 32-bit pixel index",
               (long long)v->pixels);
    if (k->op == CONVCAT_DGRAD && v->pixels + (int64_t)k->tile_m * k->cluster_m > INT32_MAX)
        REFUSE(CVC_RULE_INDEX, "N*Z*P*Q = %lld exceeds the kernel's 32-bit pixel index", (long long)v->pixels);
    const int64_t k_iters = cvc_k_iters(e, v);
    if (k_iters > INT32_MAX)
        REFUSE(CVC_RULE_INDEX, "the GEMM K loop is %lld stages: more than the kernel's 32-bit count",
               (long long)k_iters);
    int64_t tm, tn;
    cvc_cluster_tiles(e, v, &tm, &tn);
    if (tm * tn > INT32_MAX / 64)
        REFUSE(CVC_RULE_INDEX, "%lld cluster tiles: more than the kernel's 32-bit tile index allows",
               (long long)(tm * tn));
    /* TMA descriptors: every limit of cuTensorMapEncodeIm2col / Tiled. */
    return check_operands(e, v, why, n, rule);
}

convcat_status cvc_check_entry(const cvc_entry *e, const cvc_view *v, char *why, size_t n, cvc_rule *rule_out)
{
    cvc_rule unused;
    cvc_rule *rule = rule_out ? rule_out : &unused;
    *rule = CVC_RULE_NONE;
    const cvc_key *k = &e->k;
    const convcat_problem *p = &v->p;
    if (cvc_folds(e, v)) {   /* a 3D problem that is a 2D one: that 2D problem's rules */
        cvc_view folded;
        if (cvc_folded_view(v, &folded) != CONVCAT_OK)
            REFUSE(CVC_RULE_DIMS, "kernel is 2D, problem is 3D");
        return cvc_check_entry(e, &folded, why, n, rule_out);
    }
    if (cvc_turns(e, v)) {
        cvc_view turned;   /* the fprop of dy, whose rules are this kernel's */
        char inner[176];
        if (cvc_turned_view(v, &turned, inner, sizeof inner) != CONVCAT_OK)
            REFUSE(v->strided ? CVC_RULE_STRIDE : CVC_RULE_FILTER, "%s", inner);
        const convcat_status st = cvc_check_entry(e, &turned, inner, sizeof inner, rule);
        if (st != CONVCAT_OK)
            cvc_say(why, n, "as the fprop of dy: %s", inner);
        return st;
    }
    if (p->op != k->op)
        REFUSE(CVC_RULE_OP, "kernel computes %s, problem is %s", convcat_op_name(k->op),
               convcat_op_name(p->op) ? convcat_op_name(p->op) : "an unknown op");
    if (p->dims != k->dims)
        REFUSE(CVC_RULE_DIMS, "kernel is %dD, problem is %dD%s", k->dims, p->dims,
               p->dims == 3 && k->dims == 2 ? " (a 3D problem runs on 2D kernels where its filter is 1 along D, "
                                              "unpadded and unit-stride there, or 1 x 1 along H and W, likewise)" : "");
    if (p->a_type != k->a || p->b_type != k->b || p->out_type != k->out)
        REFUSE(CVC_RULE_TYPES, "kernel takes %s x %s -> %s, problem is %s x %s -> %s", convcat_dtype_name(k->a),
               convcat_dtype_name(k->b), convcat_dtype_name(k->out),
               convcat_dtype_name(p->a_type) ? convcat_dtype_name(p->a_type) : "?",
               convcat_dtype_name(p->b_type) ? convcat_dtype_name(p->b_type) : "?",
               convcat_dtype_name(p->out_type) ? convcat_dtype_name(p->out_type) : "?");
    if (p->mode != CONVCAT_CROSS_CORRELATION)
        REFUSE(CVC_RULE_MODE, "convolution mode (flipped filter) is not supported: flip the filter and use "
               "cross-correlation");
    const int widen = cvc_widening(e, v);
    if (widen > 1) {
        cvc_view wide;   /* widen groups as one, block diagonal: that problem's rules */
        char inner[160];
        if (cvc_widened_view(v, widen, &wide) != CONVCAT_OK)
            REFUSE(CVC_RULE_GROUPS, "groups = %d: %d of them as one do not divide them", p->groups, widen);
        const convcat_status st = cvc_check_entry(e, &wide, inner, sizeof inner, rule);
        if (st != CONVCAT_OK)
            cvc_say(why, n, "as %d groups of %d channels: %s", wide.p.groups, wide.cg, inner);
        return st;
    }
    convcat_status st = check_groups(e, v, why, n, rule);
    if (st != CONVCAT_OK)
        return st;
    /* A strided dgrad is a launch per stride phase (each residue of the strides with dx pixels):
     * bounded, so that planning and the time model stay small (the bench networks have at most 256).
     * A gather kernel runs a patch convolution's dgrad in one launch. */
    if (k->op == CONVCAT_DGRAD && v->phases > CVC_MAX_PHASES && !(v->patch && e->family == CVC_FAMILY_GATHER))
        REFUSE(CVC_RULE_STRIDE, "strides (%d, %d, %d) over dx of %d x %d x %d: %s%d stride phases, a launch each; at "
               "most %d are run", p->stride[0], p->stride[1], p->stride[2], p->d, p->h, p->w,
               v->phases == INT32_MAX ? "at least " : "", v->phases, CVC_MAX_PHASES);
    /* Every family counts channels in int: a channel loop (c += tile K), a tile's columns (its first
     * column + its offset), a direct block's channels (its first + a lane's) pass C and K by up to a
     * tile. */
    const int span_m = k->tile_m * k->cluster_m, span_n = k->tile_n * k->cluster_n;
    const int span_mn = span_m > span_n ? span_m : span_n, tile = span_mn > k->tile_k ? span_mn : k->tile_k;
    if ((int64_t)p->c + tile > INT32_MAX || (int64_t)p->k + tile > INT32_MAX)
        REFUSE(CVC_RULE_INDEX, "C = %d, K = %d: the kernel's 32-bit channel counters step up to %d past them", p->c,
               p->k, tile);
    switch (e->family) {
    case CVC_FAMILY_TMA: return tma_rules(e, v, why, n, rule);
    case CVC_FAMILY_GATHER: st = cvc_gather_rules(e, v, why, n); break;
    case CVC_FAMILY_DIRECT: st = cvc_direct_rules(e, v, why, n); break;
    default: REFUSE(CVC_RULE_TILE, "kernel family %d: not one this runtime runs", e->family);
    }
    if (st != CONVCAT_OK)
        *rule = CVC_RULE_TILE;
    return st;
}

convcat_status convcat_check(const convcat_catalog *cat, size_t index, const convcat_problem *p, char *why,
                             size_t why_size)
{
    if (!cat || index >= cat->count || !p)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_check: no entry %zu or NULL problem", index);
    char buf[192];
    cvc_view v;
    convcat_status st = cvc_view_make(p, &v, buf, sizeof buf);
    if (st == CONVCAT_OK)
        st = cvc_check_entry(&cat->entries[index], &v, buf, sizeof buf, NULL);
    if (st != CONVCAT_OK) {
        cvc_say(why, why_size, "%s", buf);
        return cvc_fail(st, "%s: %s", cat->entries[index].key, buf);
    }
    cvc_say(why, why_size, "ok");
    return CONVCAT_OK;
}
