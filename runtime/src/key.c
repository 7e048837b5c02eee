/* key.c: the kernel key, parsed and printed exactly as generator/convcat_gen/space.py does.
 *
 *   ARCH_OP_Nd_A_B_ACC_OUT_MxNxK_sS_cMxN[fMxN]_SCHEDULE
 *   sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop
 *   sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c2x1f1x1_1sm   (dynamic cluster:
 *                                              prefer 2x1, fall back to 1x1)
 *
 * Eleven '_'-separated fields, no hash, one spelling per kernel (a parse
 * followed by a print gives the input back).  tests/key_vectors.txt holds
 * the vectors both implementations are tested against.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { KEY_FIELDS = 11 };

static int lookup(const char *tok, const char *(*name)(int), int lo, int hi)
{
    for (int v = lo; v <= hi; ++v) {
        const char *n = name(v);
        if (n && strcmp(n, tok) == 0)
            return v;
    }
    return -1;
}

static const char *arch_name(int v) { return v == CONVCAT_ARCH_ANY ? NULL : convcat_arch_name(v); }
static const char *op_name(int v) { return convcat_op_name(v); }
static const char *dtype_name(int v) { return convcat_dtype_name(v); }
static const char *schedule_name(int v) { return convcat_schedule_name(v); }

/* A decimal of 1..max_digits digits with no leading zero; the rest of the
 * token is returned in *end. */
static bool number(const char *s, int max_digits, int *value, const char **end)
{
    if (*s < '1' || *s > '9')
        return false;
    int v = 0, n = 0;
    while (*s >= '0' && *s <= '9') {
        if (++n > max_digits)
            return false;
        v = v * 10 + (*s++ - '0');
    }
    *value = v;
    *end = s;
    return true;
}

/* "MxN..." with `count` numbers of at most `digits` digits each. */
static bool dims_x(const char *s, int count, int digits, int *out)
{
    for (int i = 0; i < count; ++i) {
        if (!number(s, digits, &out[i], &s))
            return false;
        if (i + 1 < count && *s++ != 'x')
            return false;
    }
    return *s == '\0';
}

bool cvc_key_parse(const char *text, cvc_key *out, char *why, size_t why_size)
{
    char buf[CVC_KEY_BYTES];
    char *tok[KEY_FIELDS];
    int n = 0;
    if (!text || strlen(text) >= sizeof buf) {
        cvc_say(why, why_size, "key is missing or longer than %u characters", CVC_KEY_BYTES - 1);
        return false;
    }
    strcpy(buf, text);
    for (char *p = buf, *start = buf;; ++p) {
        if (*p == '_' || *p == '\0') {
            const bool last = *p == '\0';
            if (n == KEY_FIELDS || p == start) {
                cvc_say(why, why_size, "'%s' is not a key of the form "
                        "ARCH_OP_Nd_A_B_ACC_OUT_MxNxK_sS_cMxN[fMxN]_SCHEDULE", text);
                return false;
            }
            *p = '\0';
            tok[n++] = start;
            start = p + 1;
            if (last)
                break;
        }
    }
    cvc_key k;
    int tile[3], cluster[4] = {0, 0, 0, 0}, v;
    const char *end;
    if (n != KEY_FIELDS) {
        cvc_say(why, why_size, "'%s' has %d fields, a key has %d", text, n, KEY_FIELDS);
        return false;
    }
    if ((v = lookup(tok[0], arch_name, 1, 2)) < 0) {
        cvc_say(why, why_size, "'%s': unknown arch '%s'", text, tok[0]);
        return false;
    }
    k.arch = (convcat_arch)v;
    if ((v = lookup(tok[1], op_name, 0, 2)) < 0) {
        cvc_say(why, why_size, "'%s': unknown op '%s'", text, tok[1]);
        return false;
    }
    k.op = (convcat_op)v;
    if (!(tok[2][0] >= '1' && tok[2][0] <= '3' && tok[2][1] == 'd' && tok[2][2] == '\0')) {
        cvc_say(why, why_size, "'%s': dims '%s' is not 1d, 2d or 3d", text, tok[2]);
        return false;
    }
    k.dims = tok[2][0] - '0';
    convcat_dtype *types[4] = {&k.a, &k.b, &k.acc, &k.out};
    for (int i = 0; i < 4; ++i) {
        if ((v = lookup(tok[3 + i], dtype_name, 1, 6)) < 0) {
            cvc_say(why, why_size, "'%s': unknown data type '%s'", text, tok[3 + i]);
            return false;
        }
        *types[i] = (convcat_dtype)v;
    }
    if (!dims_x(tok[7], 3, 4, tile)) {
        cvc_say(why, why_size, "'%s': tile '%s' is not MxNxK", text, tok[7]);
        return false;
    }
    k.tile_m = tile[0], k.tile_n = tile[1], k.tile_k = tile[2];
    if (tok[8][0] != 's' || !number(tok[8] + 1, 2, &k.stages, &end) || *end) {
        cvc_say(why, why_size, "'%s': stages '%s' is not sN", text, tok[8]);
        return false;
    }
    /* cMxN, or cMxNfMxN: a dynamic cluster and its fallback (both digits 1..9). */
    char *fb = strchr(tok[9], 'f');
    if (fb)
        *fb++ = '\0';
    if (tok[9][0] != 'c' || !dims_x(tok[9] + 1, 2, 1, cluster) || (fb && !dims_x(fb, 2, 1, cluster + 2))) {
        if (fb)
            fb[-1] = 'f';
        cvc_say(why, why_size, "'%s': cluster '%s' is not cMxN or cMxNfMxN", text, tok[9]);
        return false;
    }
    k.cluster_m = cluster[0], k.cluster_n = cluster[1];
    k.fallback_m = cluster[2], k.fallback_n = cluster[3];
    if ((v = lookup(tok[10], schedule_name, CONVCAT_COOP, CONVCAT_GROUPED)) < 0) {
        cvc_say(why, why_size, "'%s': unknown schedule '%s'", text, tok[10]);
        return false;
    }
    k.schedule = (convcat_schedule)v;
    *out = k;
    return true;
}

int cvc_key_print(const cvc_key *k, char *buf, size_t size)
{
    char fb[16] = "";
    if (cvc_key_dynamic(k))
        snprintf(fb, sizeof fb, "f%dx%d", k->fallback_m, k->fallback_n);
    return snprintf(buf, size, "%s_%s_%dd_%s_%s_%s_%s_%dx%dx%d_s%d_c%dx%d%s_%s",
                    convcat_arch_name(k->arch), convcat_op_name(k->op), k->dims,
                    convcat_dtype_name(k->a), convcat_dtype_name(k->b), convcat_dtype_name(k->acc),
                    convcat_dtype_name(k->out), k->tile_m, k->tile_n, k->tile_k, k->stages,
                    k->cluster_m, k->cluster_n, fb, convcat_schedule_name(k->schedule));
}

bool cvc_dynamic_cluster_valid(const cvc_key *k, char *why, size_t why_size)
{
    if (!cvc_key_dynamic(k))
        return true;
    const int cm = k->cluster_m, cn = k->cluster_n, fm = k->fallback_m, fn = k->fallback_n;
    if (k->arch != CONVCAT_ARCH_SM100A) {
        cvc_say(why, why_size, "cluster %dx%d with fallback %dx%d: sm90a has no preferred-cluster launch; "
                "dynamic clusters are sm100a only", cm, cn, fm, fn);
        return false;
    }
    if (fm < 1 || fn < 1 || fm * fn >= cm * cn) {
        cvc_say(why, why_size, "cluster %dx%d with fallback %dx%d: the fallback cluster must be smaller than the "
                "preferred one", cm, cn, fm, fn);
        return false;
    }
    if (cm % fm || cn % fn) {
        cvc_say(why, why_size, "cluster %dx%d with fallback %dx%d: the fallback must tile the preferred cluster "
                "(divide M and N)", cm, cn, fm, fn);
        return false;
    }
    if (fn > 1 && fm != cm) {
        cvc_say(why, why_size, "cluster %dx%d with fallback %dx%d: a fallback cluster is consecutive ranks "
                "(x fastest) of a preferred one, so it is 1..%d x 1 or %d x N", cm, cn, fm, fn, cm, cm);
        return false;
    }
    if (k->schedule == CONVCAT_2SM && fm != 2) {
        cvc_say(why, why_size, "fallback cluster %dx%d: a 2sm MMA pairs the two CTAs along cluster M (2x1 or 2x2)",
                fm, fn);
        return false;
    }
    return true;
}
