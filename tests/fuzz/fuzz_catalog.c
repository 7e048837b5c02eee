/* fuzz_catalog.c: libFuzzer harness for catalog files (runtime/src/catalog.c), opened from memory.
 *
 * A random mutation of a catalog nearly always breaks a checksum, and open refuses it there.  To
 * reach the field validation behind the checksums, the harness repairs each input as the packer
 * would have written it: every code blob's CRC into its index record (where the record and the
 * blob lie inside the input), the index CRC, the file size and the header CRC.  A catalog that
 * opens is then used as a caller would: every entry's info and key lookup, and convcat_check and
 * convcat_query of problems shaped for each entry's op, dims and types, so that derived fields
 * the validation let through reach the rules and the time model.  Must never crash or trip
 * ASan/UBSan; open either refuses with a reason or gives a catalog whose every call works.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i)
        p[i] = (uint8_t)(v >> 8 * i);
}

static uint64_t rd(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; ++i)
        v |= (uint64_t)p[i] << 8 * i;
    return v;
}

/* The checksums and the size field of `f` as the packer computes them, where they can be. */
static void repair(uint8_t *f, size_t size)
{
    if (size < CVC_HEADER_BYTES)
        return;
    const uint64_t count = rd(f + CVC_HD_COUNT_OFF, CVC_HD_COUNT_SIZE);
    const uint64_t index_off = rd(f + CVC_HD_INDEX_OFFSET_OFF, CVC_HD_INDEX_OFFSET_SIZE);
    if (index_off <= size && count <= (size - index_off) / CVC_ENTRY_BYTES) {
        for (uint64_t i = 0; i < count; ++i) {
            uint8_t *r = f + index_off + i * CVC_ENTRY_BYTES;
            const uint64_t off = rd(r + CVC_IX_BLOB_OFFSET_OFF, CVC_IX_BLOB_OFFSET_SIZE);
            const uint64_t n = rd(r + CVC_IX_BLOB_SIZE_OFF, CVC_IX_BLOB_SIZE_SIZE);
            if (off <= size && n <= size - off)
                wr32(r + CVC_IX_BLOB_CRC_OFF, cvc_crc32(f + off, (size_t)n));
        }
        wr32(f + CVC_HD_INDEX_CRC_OFF, cvc_crc32(f + index_off, (size_t)(count * CVC_ENTRY_BYTES)));
    }
    for (unsigned i = 0; i < CVC_HD_FILE_SIZE_SIZE; ++i)
        f[CVC_HD_FILE_SIZE_OFF + i] = (uint8_t)((uint64_t)size >> 8 * i);
    wr32(f + CVC_HD_HEADER_CRC_OFF, cvc_crc32(f, CVC_HD_HEADER_CRC_OFF));
}

/* Problems of entry `e`'s op, dims and types: plain, strided, dilated, depthwise, grouped, 1x1. */
static int problems_for(const convcat_entry_info *e, convcat_problem *out)
{
    int n = 0;
    for (int variant = 0; variant < 6; ++variant) {
        convcat_problem p;
        convcat_problem_init(&p);
        p.op = e->op, p.dims = e->dims, p.a_type = e->a_type, p.b_type = e->b_type, p.out_type = e->out_type;
        p.n = 2, p.c = p.k = 64;
        for (int a = 3 - e->dims; a < 3; ++a) {
            int *ext = a == 0 ? &p.d : a == 1 ? &p.h : &p.w, *filt = a == 0 ? &p.t : a == 1 ? &p.r : &p.s;
            *ext = 9;
            *filt = variant == 5 ? 1 : 3;
            p.pad_lo[a] = p.pad_hi[a] = variant == 5 ? 0 : 1;
            p.stride[a] = variant == 1 ? 2 : 1;
            p.dilation[a] = variant == 2 ? 2 : 1;
            if (variant == 2)
                p.pad_lo[a] = p.pad_hi[a] = 2;
        }
        if (variant == 3)
            p.groups = p.c = p.k = 32;
        if (variant == 4)
            p.groups = 4, p.c = p.k = 64;
        out[n++] = p;
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *f = malloc(size ? size : 1);
    if (!f)
        return 0;
    memcpy(f, data, size);
    repair(f, size);
    convcat_catalog *cat = NULL;
    const convcat_status st = convcat_open_memory(f, size, &cat);
    free(f);
    if (st != CONVCAT_OK) {
        if (cat || !convcat_last_error()[0])
            abort();   /* a refusal gives no catalog and says why */
        return 0;
    }
    const size_t count = convcat_count(cat);
    static convcat_candidate rows[64];
    for (size_t i = 0; i < count; ++i) {
        convcat_entry_info e;
        size_t found;
        if (convcat_entry_info_get(cat, i, &e) != CONVCAT_OK || convcat_find(cat, e.key, &found) != CONVCAT_OK ||
            found != i)
            abort();
        convcat_problem ps[8];
        const int np = problems_for(&e, ps);
        for (int j = 0; j < np; ++j) {
            char why[192];
            convcat_check(cat, i, &ps[j], why, sizeof why);
            size_t n = 0, ok = 0;
            if (i < 4 && convcat_query(cat, &ps[j], CONVCAT_ARCH_ANY, 0, rows, CVC_ARRAY_LEN(rows), &n, &ok) ==
                             CONVCAT_OK &&
                (n > count || ok > n))
                abort();
        }
    }
    convcat_close(cat);
    return 0;
}
