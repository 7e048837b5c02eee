/* coverage.c: `convcat coverage`: which rows of a problem file the catalog can run, per data type.
 *
 * A problem file has the columns of bench/layers.txt (name op N D H W C K T R S pad_d pad_h pad_w
 * stride_d stride_h stride_w dil_d dil_h dil_w groups, optionally pad_d_hi pad_h_hi pad_w_hi);
 * rows are 3D when D or T is above 1, 1D when H and R are 1, else 2D.  For each row and type the
 * answer is the number of kernels that can run it and the time model's pick, or the reason the
 * closest kernel gives (convcat_query ranks the refusals).  No GPU is needed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage.h"

#define MAX_COLS 32

static int column(char cols[][32], int ncols, const char *name)
{
    for (int i = 0; i < ncols; ++i)
        if (strcmp(cols[i], name) == 0)
            return i;
    return -1;
}

/* One row -> a problem (forward terms); 0 on success, else a message in why. */
static int row_problem(char cols[][32], int ncols, char vals[][64], convcat_dtype dt, convcat_problem *p,
                       char *why, size_t n)
{
    static const char *const need[] = {"op", "N", "D", "H", "W", "C", "K", "T", "R", "S", "pad_d", "pad_h",
                                       "pad_w", "stride_d", "stride_h", "stride_w", "dil_d", "dil_h", "dil_w",
                                       "groups"};
    long v[20];
    for (int i = 0; i < 20; ++i) {
        const int c = column(cols, ncols, need[i]);
        if (c < 0) {
            snprintf(why, n, "no column %s", need[i]);
            return -1;
        }
        if (i > 0) {
            char *end;
            v[i] = strtol(vals[c], &end, 10);
            if (*end || v[i] < 0 || v[i] > 0x7fffffff) {
                snprintf(why, n, "column %s: '%s' is not an integer", need[i], vals[c]);
                return -1;
            }
        }
    }
    convcat_problem_init(p);
    const char *op = vals[column(cols, ncols, "op")];
    p->op = strcmp(op, "dgrad") == 0 ? CONVCAT_DGRAD : strcmp(op, "wgrad") == 0 ? CONVCAT_WGRAD : CONVCAT_FPROP;
    if (strcmp(op, "fprop") && strcmp(op, "dgrad") && strcmp(op, "wgrad")) {
        snprintf(why, n, "op '%s' is not fprop, dgrad or wgrad", op);
        return -1;
    }
    p->n = (int)v[1], p->d = (int)v[2], p->h = (int)v[3], p->w = (int)v[4], p->c = (int)v[5], p->k = (int)v[6];
    p->t = (int)v[7], p->r = (int)v[8], p->s = (int)v[9];
    for (int a = 0; a < 3; ++a) {
        p->pad_lo[a] = p->pad_hi[a] = (int)v[10 + a];
        p->stride[a] = (int)v[13 + a];
        p->dilation[a] = (int)v[16 + a];
        static const char *const hi[3] = {"pad_d_hi", "pad_h_hi", "pad_w_hi"};
        const int c = column(cols, ncols, hi[a]);
        if (c >= 0)
            p->pad_hi[a] = atoi(vals[c]);
    }
    p->groups = (int)v[19];
    p->dims = p->d > 1 || p->t > 1 ? 3 : p->h == 1 && p->r == 1 ? 1 : 2;
    p->a_type = p->b_type = dt;
    p->out_type = dt == CONVCAT_TF32 ? CONVCAT_F32 : dt;
    return 0;
}

int cvc_coverage(convcat_catalog *const *cats, int ncats, const char *const *files, int nfiles,
                 const convcat_dtype *dtypes, int ndtypes, convcat_arch arch, int json, FILE *out)
{
    size_t cap = 0;
    for (int c = 0; c < ncats; ++c)
        cap = convcat_count(cats[c]) > cap ? convcat_count(cats[c]) : cap;
    convcat_candidate *rows = malloc((cap ? cap : 1) * sizeof *rows);
    if (!rows) {
        fprintf(stderr, "convcat: coverage: out of memory\n");
        return 1;
    }
    long runnable = 0, refused = 0, bad = 0;
    if (json)
        fprintf(out, "{\"rows\": [");
    int first = 1;
    for (int f = 0; f < nfiles; ++f) {
        FILE *in = fopen(files[f], "r");
        if (!in) {
            fprintf(stderr, "convcat: coverage: cannot open %s\n", files[f]);
            free(rows);
            return 2;
        }
        char line[1024], cols[MAX_COLS][32];
        int ncols = 0, lineno = 0;
        while (fgets(line, sizeof line, in)) {
            ++lineno;
            if (line[0] == '#' || line[strspn(line, " \t\r\n")] == '\0')
                continue;
            char vals[MAX_COLS][64];
            int nv = 0;
            for (char *save = NULL, *t = strtok_r(line, " \t\r\n", &save); t && nv < MAX_COLS;
                 t = strtok_r(NULL, " \t\r\n", &save))
                snprintf(vals[nv++], sizeof vals[0], "%.63s", t);
            if (!ncols) {   /* the header */
                for (int i = 0; i < nv; ++i)
                    snprintf(cols[i], sizeof cols[0], "%.31s", vals[i]);
                ncols = nv;
                continue;
            }
            for (int d = 0; d < ndtypes; ++d) {
                convcat_problem p;
                char why[192];
                if (nv != ncols || row_problem(cols, ncols, vals, dtypes[d], &p, why, sizeof why)) {
                    if (nv != ncols)
                        snprintf(why, sizeof why, "%d values for %d columns", nv, ncols);
                    fprintf(stderr, "convcat: coverage: %s:%d: %s\n", files[f], lineno, why);
                    ++bad;
                    break;
                }
                size_t ok = 0, best_cat = 0, best = 0, refusal_cat = 0;
                double best_us = 0.0;
                convcat_candidate refusal = {0};
                for (int c = 0; c < ncats; ++c) {
                    size_t n = 0, k = 0;
                    if (convcat_query(cats[c], &p, arch, 0, rows, cap, &n, &k) != CONVCAT_OK || n == 0)
                        continue;
                    if (k && (ok == 0 || rows[0].predicted_us < best_us))
                        best_cat = (size_t)c, best = rows[0].index, best_us = rows[0].predicted_us;
                    if (!k && ok == 0 && !refusal.reason[0])
                        refusal = rows[0], refusal_cat = (size_t)c;
                    ok += k;
                }
                const char *dt = convcat_dtype_name(dtypes[d]);
                convcat_entry_info e = {0};
                if (ok)
                    convcat_entry_info_get(cats[best_cat], best, &e);
                else if (refusal.reason[0])
                    convcat_entry_info_get(cats[refusal_cat], refusal.index, &e);
                if (json) {
                    fprintf(out, "%s\n {\"file\": \"%s\", \"name\": \"%s\", \"dtype\": \"%s\", \"runnable\": %zu", first ? "" : ",",
                            files[f], vals[0], dt, ok);
                    if (ok)
                        fprintf(out, ", \"pick\": \"%s\", \"predicted_us\": %.3f}", e.key, best_us);
                    else
                        fprintf(out, ", \"reason\": \"%s\", \"kernel\": \"%s\"}", refusal.reason, e.key ? e.key : "");
                    first = 0;
                } else if (ok) {
                    fprintf(out, "%-44s %-5s %4zu kernels  %s (%.1f us)\n", vals[0], dt, ok, e.key, best_us);
                } else {
                    fprintf(out, "%-44s %-5s REFUSED  %s (%s)\n", vals[0], dt, refusal.reason[0] ? refusal.reason : "no kernel",
                            e.key ? e.key : "an empty catalog");
                }
                ok ? ++runnable : ++refused;
            }
        }
        fclose(in);
    }
    if (json)
        fprintf(out, "\n], \"runnable\": %ld, \"refused\": %ld}\n", runnable, refused);
    else
        fprintf(out, "%ld row x type pairs: %ld runnable, %ld refused\n", runnable + refused, runnable, refused);
    free(rows);
    return bad ? 2 : refused ? 1 : 0;
}
