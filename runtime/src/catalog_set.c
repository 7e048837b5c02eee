/* catalog_set.c: several catalogs queried as one (convcat.h, convcat_catalog_set).
 *
 * A set borrows its catalogs and holds each key once.  The catalog added
 * first owns a key; under CONVCAT_SET_SHADOW a later catalog's entry of the
 * same key is shadowed (kept out of find and count, listed by queries as not
 * runnable with the owner named), and without it such a catalog is refused.
 * Queries run convcat_query on each catalog and merge the answers by the
 * same order convcat_query ranks by.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

typedef struct set_member {
    const convcat_catalog *cat;
    size_t *owner;   /* per entry: the position of the catalog that owns its key (this one unless shadowed) */
    size_t shadowed;
} set_member;

struct convcat_catalog_set {
    set_member *members;
    size_t size, cap;
};

/* The index of `key` in `cat`, or (size_t)-1.  Not convcat_find: a miss here is no failure of the
 * caller's call, and must not overwrite convcat_last_error(). */
static size_t lookup(const convcat_catalog *cat, const char *key)
{
    size_t lo = 0, hi = cat->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(cat->entries[mid].key, key);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (size_t)-1;
}

convcat_status convcat_catalog_set_create(convcat_catalog_set **out)
{
    if (!out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_catalog_set_create: set_out is NULL");
    *out = calloc(1, sizeof **out);
    return *out ? CONVCAT_OK : cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory making a catalog set");
}

void convcat_catalog_set_destroy(convcat_catalog_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->size; ++i)
        free(set->members[i].owner);
    free(set->members);
    free(set);
}

convcat_status convcat_catalog_set_add(convcat_catalog_set *set, const convcat_catalog *cat, unsigned flags)
{
    if (!set || !cat)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_catalog_set_add: NULL argument");
    if (flags & ~CONVCAT_SET_SHADOW)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_catalog_set_add: unknown flags 0x%x", flags);
    for (size_t m = 0; m < set->size; ++m)
        if (set->members[m].cat == cat)
            return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_catalog_set_add: the catalog (id %08x) is already "
                            "in the set, at position %zu", cat->id, m);
    size_t *owner = malloc((cat->count ? cat->count : 1) * sizeof *owner);
    if (!owner)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory adding a catalog to a set");
    const size_t pos = set->size;
    size_t shadowed = 0;
    for (size_t i = 0; i < cat->count; ++i) {
        owner[i] = pos;
        for (size_t m = 0; m < set->size && owner[i] == pos; ++m)
            if (lookup(set->members[m].cat, cat->entries[i].key) != (size_t)-1)
                owner[i] = m;   /* the first holder of a key always owns it */
        if (owner[i] == pos)
            continue;
        if (!(flags & CONVCAT_SET_SHADOW)) {
            const convcat_status st = cvc_fail(
                CONVCAT_ERR_INVALID_ARGUMENT,
                "catalog %08x holds %s, which catalog %zu of the set (id %08x) holds too: keys must be unique "
                "across a set (add it with CONVCAT_SET_SHADOW to let the earlier catalog's entry win)",
                cat->id, cat->entries[i].key, owner[i], set->members[owner[i]].cat->id);
            free(owner);
            return st;
        }
        ++shadowed;
    }
    if (set->size == set->cap) {
        const size_t cap = set->cap ? 2 * set->cap : 4;
        set_member *grown = realloc(set->members, cap * sizeof *grown);
        if (!grown) {
            free(owner);
            return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory adding a catalog to a set");
        }
        set->members = grown;
        set->cap = cap;
    }
    set->members[set->size++] = (set_member){.cat = cat, .owner = owner, .shadowed = shadowed};
    if (cvc_log_enabled())
        cvc_log("set: catalog %08x (%zu kernels) at position %zu, %zu of them shadowed by earlier catalogs",
                cat->id, cat->count, pos, shadowed);
    return CONVCAT_OK;
}

size_t convcat_catalog_set_size(const convcat_catalog_set *set)
{
    return set ? set->size : 0;
}

const convcat_catalog *convcat_catalog_set_at(const convcat_catalog_set *set, size_t position)
{
    return set && position < set->size ? set->members[position].cat : NULL;
}

size_t convcat_catalog_set_count(const convcat_catalog_set *set)
{
    size_t n = 0;
    for (size_t m = 0; set && m < set->size; ++m)
        n += set->members[m].cat->count - set->members[m].shadowed;
    return n;
}

convcat_status convcat_catalog_set_find(const convcat_catalog_set *set, const char *key,
                                        const convcat_catalog **catalog_out, size_t *index_out)
{
    if (!set || !key || !index_out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_catalog_set_find: NULL argument");
    for (size_t m = 0; m < set->size; ++m) {
        const size_t i = lookup(set->members[m].cat, key);
        if (i != (size_t)-1) {   /* the first holder owns the key */
            if (catalog_out)
                *catalog_out = set->members[m].cat;
            *index_out = i;
            return CONVCAT_OK;
        }
    }
    if (set->size == 1)
        return cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel '%s' in the catalog", key);
    return cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel '%s' in any of the set's %zu catalogs", key, set->size);
}

/* A merged row and what orders it. */
typedef struct merged {
    convcat_set_candidate row;
    int stages;
    size_t order;   /* the row's place in its catalog's answer */
} merged;

/* convcat_query's order across catalogs: runnable first, fastest predicted, deeper pipeline, then the
 * earlier catalog and its own order. */
static int by_rank(const void *x, const void *y)
{
    const merged *a = x, *b = y;
    const convcat_candidate *ca = &a->row.candidate, *cb = &b->row.candidate;
    if (ca->ok != cb->ok)
        return cb->ok - ca->ok;
    if (ca->ok && ca->predicted_us != cb->predicted_us)
        return ca->predicted_us < cb->predicted_us ? -1 : 1;
    if (ca->ok && a->stages != b->stages)
        return b->stages - a->stages;
    if (a->row.position != b->row.position)
        return a->row.position < b->row.position ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

convcat_status convcat_query_set(const convcat_catalog_set *set, const convcat_problem *p, convcat_arch arch,
                                 int sm_count, convcat_set_candidate *out, size_t capacity, size_t *count_out,
                                 size_t *ok_out)
{
    if (!set || !p || !count_out || (!out && capacity))
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_query_set: NULL argument");
    size_t total = 0, most = 1;
    for (size_t m = 0; m < set->size; ++m) {
        total += set->members[m].cat->count;
        if (set->members[m].cat->count > most)
            most = set->members[m].cat->count;
    }
    merged *all = calloc(total ? total : 1, sizeof *all);
    convcat_candidate *rows = malloc(most * sizeof *rows);
    if (!all || !rows) {
        free(all);
        free(rows);
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "convcat_query_set: out of memory");
    }
    size_t n = 0, ok = 0;
    convcat_status st = CONVCAT_OK;
    for (size_t m = 0; m < set->size && st == CONVCAT_OK; ++m) {
        const set_member *mem = &set->members[m];
        size_t got = 0;
        st = convcat_query(mem->cat, p, arch, sm_count, rows, mem->cat->count, &got, NULL);
        for (size_t r = 0; st == CONVCAT_OK && r < got; ++r) {
            merged *x = &all[n++];
            x->row = (convcat_set_candidate){.catalog = mem->cat, .position = m, .candidate = rows[r]};
            x->stages = mem->cat->entries[rows[r].index].k.stages;
            x->order = r;
            const size_t owner = mem->owner[rows[r].index];
            if (owner != m) {
                convcat_candidate *c = &x->row.candidate;
                c->ok = 0;
                c->predicted_us = 0.0;
                cvc_say(c->reason, sizeof c->reason, "shadowed: catalog %zu of the set (id %08x) holds the same key",
                        owner, set->members[owner].cat->id);
            }
            ok += x->row.candidate.ok != 0;
        }
    }
    if (st == CONVCAT_OK) {
        qsort(all, n, sizeof *all, by_rank);
        const size_t k = n < capacity ? n : capacity;
        for (size_t i = 0; i < k; ++i)
            out[i] = all[i].row;
        *count_out = k;
        if (ok_out)
            *ok_out = ok;
    }
    free(all);
    free(rows);
    return st;
}

convcat_status convcat_plan_create_set(const convcat_catalog_set *set, const convcat_problem *p, convcat_plan **out,
                                       const convcat_catalog **catalog_out, size_t *index_out)
{
    if (!set || !p || !out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_plan_create_set: NULL argument");
    *out = NULL;
    convcat_arch arch;
    int sms;
    convcat_status st = convcat_device_arch(&arch, &sms);
    if (st != CONVCAT_OK)
        return st;
    if (arch == CONVCAT_ARCH_ANY)
        return cvc_fail(CONVCAT_ERR_NO_DEVICE, "the current device is neither sm_90 nor sm_100");
    convcat_set_candidate first;
    size_t rows = 0, ok = 0;
    if ((st = convcat_query_set(set, p, arch, sms, &first, 1, &rows, &ok)) != CONVCAT_OK)
        return st;
    if (ok == 0)
        return rows ? cvc_fail(CONVCAT_ERR_NOT_FOUND, "no %s kernel of the set's %zu catalogs can run the problem; "
                               "e.g. %s: %s", convcat_arch_name(arch), set->size,
                               first.catalog->entries[first.candidate.index].key, first.candidate.reason)
                    : cvc_fail(CONVCAT_ERR_NOT_FOUND, "the set's %zu catalogs have no %s kernels", set->size,
                               convcat_arch_name(arch));
    if (cvc_log_enabled())
        cvc_log("set: %s of catalog %zu (id %08x) ranks first of %zu runnable kernels across %zu catalogs "
                "(predicted %.1f us)", first.catalog->entries[first.candidate.index].key, first.position,
                first.catalog->id, ok, set->size, first.candidate.predicted_us);
    if ((st = convcat_plan_create(first.catalog, p, first.candidate.index, out)) != CONVCAT_OK)
        return st;
    if (catalog_out)
        *catalog_out = first.catalog;
    if (index_out)
        *index_out = first.candidate.index;
    return CONVCAT_OK;
}
