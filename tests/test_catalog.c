/* test_catalog.c: opening, verifying and indexing catalog files (runtime/src/catalog.c).
 *
 * The real catalog the build made ($CONVCAT_TEST_CATALOG) must open and
 * answer for every key.  Then copies of it, damaged one way at a time, must
 * be refused with the right status and a message: where a test wants to get
 * past a checksum to reach a later check, it recomputes the checksums with
 * cvc_crc32, and it always shows that the same copy without the damage opens.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "unit.h"

static const char *catalog_path;
static uint8_t *orig;        /* the catalog file's bytes */
static size_t orig_size;
static convcat_catalog *cat; /* the catalog, opened from its file */

/* ---- byte surgery ------------------------------------------------------------ */

static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }
static void wr16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void wr32(uint8_t *p, uint32_t v) { wr16(p, (uint16_t)v), wr16(p + 2, (uint16_t)(v >> 16)); }
static void wr64(uint8_t *p, uint64_t v) { wr32(p, (uint32_t)v), wr32(p + 4, (uint32_t)(v >> 32)); }

static uint32_t count_of(const uint8_t *f) { return rd32(f + 16); }
static uint8_t *record(uint8_t *f, size_t i) { return f + CVC_HEADER_BYTES + i * CVC_ENTRY_BYTES; }

static uint8_t *copy_of_catalog(void)
{
    uint8_t *c = malloc(orig_size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    memcpy(c, orig, orig_size);
    return c;
}

/* Recompute the index CRC, then the header CRC, as the packer does. */
static void fix_crcs(uint8_t *f)
{
    wr32(f + 48, cvc_crc32(f + CVC_HEADER_BYTES, (size_t)count_of(f) * CVC_ENTRY_BYTES));
    wr32(f + 60, cvc_crc32(f, 60));
}

/* ---- opening ------------------------------------------------------------------ */

/* A message none of the calls under test writes: a failing call must replace it. */
#define MARKER "convcat_entry_info_get: no entry 987654321"

static void clear_last_error(void)
{
    convcat_entry_info e;
    convcat_entry_info_get(NULL, 987654321, &e);
    CU_ASSERT_STRING_EQUAL(convcat_last_error(), MARKER);
}

static void assert_failure_explained(convcat_status st)
{
    if (st == CONVCAT_OK)
        return;
    const char *msg = convcat_last_error();
    CU_ASSERT_TRUE(msg && *msg);
    CU_ASSERT_TRUE(msg && strcmp(msg, MARKER) != 0);
}

/* Open `size` bytes of `data` from memory; on failure the out-pointer must be
 * NULL and the last error replaced.  The message is copied to `msg`. */
static convcat_status open_mem(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
    convcat_catalog *c = (convcat_catalog *)&c;   /* any non-NULL value */
    clear_last_error();
    const convcat_status st = convcat_open_memory(data, size, &c);
    assert_failure_explained(st);
    if (msg)
        snprintf(msg, msg_size, "%s", st == CONVCAT_OK ? "" : convcat_last_error());
    if (st == CONVCAT_OK) {
        CU_ASSERT_PTR_NOT_NULL(c);
        convcat_close(c);
    } else {
        CU_ASSERT_PTR_NULL(c);
    }
    return st;
}

/* Open `f` (orig_size bytes) and expect `want`, with `mention` in the message if given. */
static void expect_open(const uint8_t *f, convcat_status want, const char *mention)
{
    char msg[512];
    UNIT_ASSERT_STATUS(open_mem(f, orig_size, msg, sizeof msg), want);
    if (mention)
        UNIT_ASSERT_MENTIONS(msg, mention);
}

static int setup(void)
{
    if (!(catalog_path = unit_env_path("CONVCAT_TEST_CATALOG")))
        return -1;
    if (!(orig = unit_read_file(catalog_path, &orig_size)))
        return -1;
    if (convcat_open(catalog_path, &cat) != CONVCAT_OK) {
        fprintf(stderr, "cannot open %s: %s\n", catalog_path, convcat_last_error());
        return -1;
    }
    return 0;
}

static int teardown(void)
{
    convcat_close(cat);
    free(orig);
    return 0;
}

/* ---- the real catalog ------------------------------------------------------------- */

static void test_real_catalog_has_entries(void)
{
    CU_ASSERT_TRUE(convcat_count(cat) > 0);
    CU_ASSERT_EQUAL(convcat_count(cat), count_of(orig));
    CU_ASSERT_EQUAL(orig_size, rd64(orig + 40));
    UNIT_ASSERT_STATUS(open_mem(orig, orig_size, NULL, 0), CONVCAT_OK);
}

static void test_keys_are_sorted_and_unique(void)
{
    convcat_entry_info prev, cur;
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, i, &cur), CONVCAT_OK);
        if (i > 0)
            CU_ASSERT_TRUE(strcmp(prev.key, cur.key) < 0);
        prev = cur;
    }
}

static void test_find_finds_every_key(void)
{
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        size_t at = (size_t)-1;
        UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, i, &e), CONVCAT_OK);
        UNIT_ASSERT_STATUS(convcat_find(cat, e.key, &at), CONVCAT_OK);
        CU_ASSERT_EQUAL(at, i);
        /* A copy of the key, not the catalog's own pointer. */
        char copy[CVC_KEY_BYTES];
        snprintf(copy, sizeof copy, "%s", e.key);
        at = (size_t)-1;
        UNIT_ASSERT_STATUS(convcat_find(cat, copy, &at), CONVCAT_OK);
        CU_ASSERT_EQUAL(at, i);
    }
}

static void test_find_refuses_unknown_keys(void)
{
    convcat_entry_info e;
    UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, 0, &e), CONVCAT_OK);
    char near[CVC_KEY_BYTES + 8];
    const char *unknown[] = {"", "sm90a", "sm100a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop",
                             "not a key at all", near};
    snprintf(near, sizeof near, "%sx", e.key);   /* a real key plus one character */
    for (size_t i = 0; i < CVC_ARRAY_LEN(unknown); ++i) {
        size_t at = 12345;
        clear_last_error();
        UNIT_ASSERT_STATUS(convcat_find(cat, unknown[i], &at), CONVCAT_ERR_NOT_FOUND);
        assert_failure_explained(CONVCAT_ERR_NOT_FOUND);
        CU_ASSERT_EQUAL(at, 12345);
    }
    snprintf(near, sizeof near, "%.*s", (int)strlen(e.key) - 1, e.key);   /* one character short */
    UNIT_ASSERT_STATUS(convcat_find(cat, near, &(size_t){0}), CONVCAT_ERR_NOT_FOUND);
}

/* entry_info agrees with the key, with the index bytes and with the packer's derivations. */
static void test_entry_info_agrees_with_the_key(void)
{
    for (size_t i = 0; i < convcat_count(cat); ++i) {
        convcat_entry_info e;
        cvc_key k;
        char why[192];
        UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, i, &e), CONVCAT_OK);
        CU_ASSERT_TRUE_FATAL(cvc_key_parse(e.key, &k, why, sizeof why));
        CU_ASSERT_EQUAL(e.arch, k.arch);
        CU_ASSERT_EQUAL(e.op, k.op);
        CU_ASSERT_EQUAL(e.dims, k.dims);
        CU_ASSERT_EQUAL(e.a_type, k.a);
        CU_ASSERT_EQUAL(e.b_type, k.b);
        CU_ASSERT_EQUAL(e.acc_type, k.acc);
        CU_ASSERT_EQUAL(e.out_type, k.out);
        CU_ASSERT_EQUAL(e.tile_m, k.tile_m);
        CU_ASSERT_EQUAL(e.tile_n, k.tile_n);
        CU_ASSERT_EQUAL(e.tile_k, k.tile_k);
        CU_ASSERT_EQUAL(e.stages, k.stages);
        CU_ASSERT_EQUAL(e.cluster_m, k.cluster_m);
        CU_ASSERT_EQUAL(e.cluster_n, k.cluster_n);
        CU_ASSERT_EQUAL(e.schedule, k.schedule);
        /* The launch fields are the index's bytes. */
        const uint8_t *r = record(orig, i);
        CU_ASSERT_STRING_EQUAL(e.key, (const char *)r);
        CU_ASSERT_EQUAL(e.threads, r[130] | r[131] << 8);
        CU_ASSERT_EQUAL(e.smem_bytes, (int)rd32(r + 132));
        CU_ASSERT_EQUAL(e.registers, r[136] | r[137] << 8);
        CU_ASSERT_EQUAL(e.code_bytes, rd64(r + 160));
        CU_ASSERT_EQUAL(e.threads, e.arch == CONVCAT_ARCH_SM100A ? 192 : 384);   /* sm100.py: 6 warps */
        CU_ASSERT_TRUE(e.registers > 0 && e.registers <= 255);
        CU_ASSERT_TRUE(e.smem_bytes > 0 && e.smem_bytes <= 232448);
        CU_ASSERT_TRUE(e.code_bytes > 0);
        /* Internals: TMA boxes as pack.py derives them, code inside the file. */
        const cvc_entry *ce = &cat->entries[i];
        const cvc_entry want = unit_entry(e.key);   /* space.derive's boxes, per op */
        CU_ASSERT_EQUAL(ce->a_box_rows, want.a_box_rows);
        CU_ASSERT_EQUAL(ce->a_box_cols, want.a_box_cols);
        CU_ASSERT_EQUAL(ce->b_box_rows, want.b_box_rows);
        CU_ASSERT_EQUAL(ce->b_box_cols, want.b_box_cols);
        CU_ASSERT_EQUAL(ce->swizzle_bytes, 128);
        CU_ASSERT_TRUE(ce->code >= cat->data + rd64(orig + 32) && ce->code + ce->code_size <= cat->data + cat->size);
        CU_ASSERT_EQUAL((uintptr_t)(ce->code - cat->data) % CVC_BLOB_ALIGN, 0);
        CU_ASSERT_EQUAL(cvc_crc32(ce->code, ce->code_size), rd32(r + 148));
        CU_ASSERT_PTR_NULL(ce->library);
    }
}

static void test_entry_info_refuses_an_index_past_the_end(void)
{
    convcat_entry_info e;
    const size_t n = convcat_count(cat);
    UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, n - 1, &e), CONVCAT_OK);
    clear_last_error();
    UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, n, &e), CONVCAT_ERR_INVALID_ARGUMENT);
    assert_failure_explained(CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, (size_t)-1, &e), CONVCAT_ERR_INVALID_ARGUMENT);
}

static void test_crc32_is_zlibs(void)
{
    CU_ASSERT_EQUAL(cvc_crc32("123456789", 9), 0xCBF43926u);
    CU_ASSERT_EQUAL(cvc_crc32("", 0), 0u);
    CU_ASSERT_EQUAL(cvc_crc32("a", 1), 0xE8B7BE43u);
}

/* ---- damaged copies ----------------------------------------------------------------- */

static void test_truncated_catalogs_are_corrupt(void)
{
    const uint64_t blobs = rd64(orig + 32);
    const size_t lengths[] = {0, 1, 7, 8, 63, 64, 65, CVC_HEADER_BYTES + CVC_ENTRY_BYTES / 2,
                              CVC_HEADER_BYTES + CVC_ENTRY_BYTES, (size_t)blobs - 1, (size_t)blobs,
                              (size_t)blobs + 1000, orig_size / 2, orig_size - 256, orig_size - 1};
    for (size_t i = 0; i < CVC_ARRAY_LEN(lengths); ++i) {
        char msg[512];
        UNIT_ASSERT_STATUS(open_mem(orig, lengths[i], msg, sizeof msg), CONVCAT_ERR_CORRUPT);
    }
    /* One byte too many is as wrong as one too few; the exact size opens. */
    uint8_t *longer = malloc(orig_size + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(longer);
    memcpy(longer, orig, orig_size);
    longer[orig_size] = 0;
    UNIT_ASSERT_STATUS(open_mem(longer, orig_size + 1, NULL, 0), CONVCAT_ERR_CORRUPT);
    UNIT_ASSERT_STATUS(open_mem(longer, orig_size, NULL, 0), CONVCAT_OK);
    free(longer);
}

static void test_a_flipped_byte_is_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const uint32_t n = count_of(orig);
    size_t offsets[64], k = 0;
    /* header: magic, version, ABI, count, sizes, offsets, CRCs, reserved */
    for (size_t o = 0; o < CVC_HEADER_BYTES; o += 4)
        offsets[k++] = o + 1;
    /* index: key, fields, boxes, CRC, blob offset and size, reserved tail; first and last entry */
    const size_t in_record[] = {0, 20, 112, 121, 130, 139, 148, 152, 160, 200, 255};
    for (size_t j = 0; j < CVC_ARRAY_LEN(in_record); ++j) {
        offsets[k++] = CVC_HEADER_BYTES + in_record[j];
        offsets[k++] = CVC_HEADER_BYTES + (n - 1) * CVC_ENTRY_BYTES + in_record[j];
    }
    /* blobs: first, middle and last byte of the first and the last */
    for (size_t e = 0; e < n; e += n - 1) {
        const uint64_t off = rd64(record(orig, e) + 152), size = rd64(record(orig, e) + 160);
        offsets[k++] = off;
        offsets[k++] = off + size / 2;
        offsets[k++] = off + size - 1;
        if (n == 1)
            break;
    }
    for (size_t j = 0; j < k; ++j) {
        for (int bit = 0; bit < 8; bit += 7) {
            f[offsets[j]] ^= (uint8_t)(1u << bit);
            char msg[512];
            const convcat_status st = open_mem(f, orig_size, msg, sizeof msg);
            if (st != CONVCAT_ERR_CORRUPT)
                printf("\n    byte %zu bit %d: %s", offsets[j], bit, convcat_status_string(st));
            CU_ASSERT_EQUAL(st, CONVCAT_ERR_CORRUPT);
            f[offsets[j]] ^= (uint8_t)(1u << bit);
        }
    }
    UNIT_ASSERT_STATUS(open_mem(f, orig_size, NULL, 0), CONVCAT_OK);
    free(f);
}

static void test_version_bumps_are_version_errors(void)
{
    uint8_t *f = copy_of_catalog();
    wr32(f + 8, CVC_FORMAT_VERSION + 1);
    expect_open(f, CONVCAT_ERR_CORRUPT, "header checksum");   /* the header CRC comes first */
    fix_crcs(f);
    char want[64];
    snprintf(want, sizeof want, "format version %u", CVC_FORMAT_VERSION + 1);
    expect_open(f, CONVCAT_ERR_VERSION, want);
    wr32(f + 8, 0);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_VERSION, "format version 0");
    wr32(f + 8, CVC_FORMAT_VERSION);
    wr32(f + 12, CONVCAT_KERNEL_ABI + 1);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_VERSION, "ABI");
    wr32(f + 12, CONVCAT_KERNEL_ABI);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

/* Bytes 112..129 of a record are fixed by the key: each one changed is refused. */
static void test_index_fields_disagreeing_with_the_key_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t last = count_of(orig) - 1;
    for (size_t field = 112; field <= 129; ++field) {
        uint8_t *r = record(f, last);
        const uint8_t saved = r[field];
        r[field] = (uint8_t)(saved + 1);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, field == 129 ? NULL : "disagree");
        r[field] = saved;
    }
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    /* A dynamic cluster's fallback shape (172, 173) is the key's too. */
    for (size_t field = 172; field <= 173; ++field) {
        uint8_t *r = record(f, last);
        const uint8_t saved = r[field];
        r[field] = (uint8_t)(saved + 1);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "fallback cluster fields disagree");
        r[field] = saved;
    }
    /* Its box rows (174, 176) are set exactly when the key has a fallback. */
    for (size_t at = 174; at <= 176; at += 2) {
        uint8_t *r = record(f, last);
        const uint16_t saved = (uint16_t)(r[at] | r[at + 1] << 8);
        wr16(r + at, saved ? 0 : 64);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "fallback box fields");
        wr16(r + at, saved);
    }
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

/* A dynamic-cluster key whose shapes break the rules (here: an sm90a one, made by
 * renaming the arch of an entry) is refused at open, with the generator's reason. */
static void test_dynamic_cluster_shapes_are_checked_at_open(void)
{
    size_t dyn = SIZE_MAX;
    for (size_t i = 0; i < count_of(orig) && dyn == SIZE_MAX; ++i)
        if (strstr((const char *)record(orig, i), "f1x1_") || strstr((const char *)record(orig, i), "f2x1_"))
            dyn = i;
    if (dyn == SIZE_MAX) {
        printf(" (no dynamic-cluster entry in this catalog)");
        return;
    }
    uint8_t *f = copy_of_catalog();
    uint8_t *r = record(f, dyn);
    r[172] = r[127], r[173] = r[128];   /* fallback = preferred: not smaller */
    char key[CVC_KEY_BYTES];
    snprintf(key, sizeof key, "%s", (const char *)r);
    char *fb = strstr(key, "f") ? strchr(strstr(key, "_c"), 'f') : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(fb);
    fb[1] = (char)('0' + r[127]), fb[3] = (char)('0' + r[128]);
    memset(r, 0, CVC_KEY_BYTES);
    memcpy(r, key, strlen(key));
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "must be smaller than the preferred one");
    free(f);
}

/* Fields the key does not fix: any value in range opens; out of range is refused. */
static void test_launch_fields_are_range_checked(void)
{
    uint8_t *f = copy_of_catalog();
    uint8_t *r = record(f, 0);
    static const struct {
        size_t at;
        uint16_t bad, good;
    } cases[] = {
        {130, 0, 1}, {130, 1025, 1024}, {138, 0, 8}, {140, 0, 8}, {142, 0, 8}, {144, 0, 8},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        uint8_t saved[2] = {r[cases[i].at], r[cases[i].at + 1]};
        wr16(r + cases[i].at, cases[i].bad);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "out of range");
        wr16(r + cases[i].at, cases[i].good);
        fix_crcs(f);
        expect_open(f, CONVCAT_OK, NULL);
        memcpy(r + cases[i].at, saved, 2);
    }
    /* Shared memory is a u32 the runtime holds in an int: 2^31 and above are refused. */
    wr32(r + 132, UINT32_C(0x80000000));
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "out of range");
    wr32(r + 132, INT32_MAX);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    /* A changed launch field is what entry_info reports. */
    wr16(r + 130, 256);
    wr32(r + 132, 1000);
    fix_crcs(f);
    convcat_catalog *c = NULL;
    UNIT_ASSERT_STATUS(convcat_open_memory(f, orig_size, &c), CONVCAT_OK);
    if (c) {
        convcat_entry_info e;
        UNIT_ASSERT_STATUS(convcat_entry_info_get(c, 0, &e), CONVCAT_OK);
        CU_ASSERT_EQUAL(e.threads, 256);
        CU_ASSERT_EQUAL(e.smem_bytes, 1000);
        convcat_close(c);
    }
    free(f);
}

/* A halo entry's input-tile rows and chunk pixels must be its tile's (compile-time in its code). */
static void test_halo_boxes_must_match_the_tile(void)
{
    uint8_t *f = copy_of_catalog();
    size_t halo = (size_t)-1;
    for (size_t i = 0; i < count_of(f) && halo == (size_t)-1; ++i)
        if (strstr((const char *)record(f, i), "_halo"))
            halo = i;
    if (halo == (size_t)-1) {   /* the ci and default catalogs hold one */
        CU_FAIL("no halo entry in the catalog");
        free(f);
        return;
    }
    uint8_t *r = record(f, halo);
    const uint16_t rows = (uint16_t)(r[138] | r[139] << 8), chunk = (uint16_t)(r[168] | r[169] << 8);
    wr16(r + 138, (uint16_t)(rows + 1));
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "halo box fields disagree with the tile");
    wr16(r + 138, rows);
    wr16(r + 168, (uint16_t)(chunk + 8));
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "halo box fields disagree with the tile");
    wr16(r + 168, chunk);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

static void test_unsorted_or_duplicate_keys_are_corrupt(void)
{
    const uint32_t n = count_of(orig);
    CU_ASSERT_FATAL(n >= 2);
    uint8_t *f = copy_of_catalog(), tmp[CVC_ENTRY_BYTES];
    memcpy(tmp, record(f, 0), CVC_ENTRY_BYTES);
    memcpy(record(f, 0), record(f, n - 1), CVC_ENTRY_BYTES);
    memcpy(record(f, n - 1), tmp, CVC_ENTRY_BYTES);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "not sorted");
    /* Two equal keys (entry 1 a copy of entry 0, its blob too). */
    memcpy(f, orig, orig_size);
    memcpy(record(f, 1), record(f, 0), CVC_ENTRY_BYTES);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "not sorted");
    /* Neighbour: the same surgery undone opens. */
    memcpy(record(f, 1), record(orig, 1), CVC_ENTRY_BYTES);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

static void test_blobs_outside_the_file_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t last = count_of(orig) - 1;
    uint8_t *r = record(f, last);
    const uint64_t off = rd64(r + 152), size = rd64(r + 160), blobs = rd64(orig + 32);
    CU_ASSERT_EQUAL(off + size, orig_size);   /* the last blob ends the file */
    const struct {
        uint64_t off, size;
    } bad[] = {
        {(orig_size + 255) / 256 * 256, size},   /* starts past the end */
        {UINT64_C(1) << 63, size},
        {UINT64_MAX - 255, 512},                 /* offset + size wraps */
        {off, size + 1},                         /* ends one byte past the end */
        {off, UINT64_MAX},
        {off, 0},                                /* empty */
        {off + 1, size - 1},                     /* misaligned */
        {blobs / 256 * 256, size},               /* aligned, but inside the index */
        {0, size},                               /* the header */
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(bad); ++i) {
        wr64(r + 152, bad[i].off);
        wr64(r + 160, bad[i].size);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "outside the file");
    }
    /* In bounds but another entry's bytes: the blob CRC catches it. */
    wr64(r + 152, rd64(record(orig, 0) + 152));
    wr64(r + 160, size);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "code checksum");
    wr64(r + 152, off);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

static void test_nonzero_reserved_bytes_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t reserved[] = {52, 55, 56, 59};   /* header u32[2] */
    for (size_t i = 0; i < CVC_ARRAY_LEN(reserved); ++i) {
        f[reserved[i]] = 1;
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "header fields");
        f[reserved[i]] = 0;
    }
    uint8_t *r = record(f, 0);
    const size_t in_record[] = {129, 178, 200, 255};
    for (size_t i = 0; i < CVC_ARRAY_LEN(in_record); ++i) {
        r[in_record[i]] = 0x80;
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, NULL);
        r[in_record[i]] = 0;
    }
    /* NUL padding after the key, and a key that fills the field without a NUL. */
    r[CVC_KEY_BYTES - 1] = 'x';
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "after the key");
    memset(r, 'a', CVC_KEY_BYTES);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "NUL");
    memcpy(r, record(orig, 0), CVC_KEY_BYTES);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

static void test_inconsistent_header_fields_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const uint32_t n = count_of(orig);
    const struct {
        size_t at;
        int bytes;
        uint64_t value;
    } bad[] = {
        {16, 4, n + 1}, {16, 4, n - 1}, {16, 4, UINT32_MAX}, {20, 4, CVC_ENTRY_BYTES - 1},
        {20, 4, CVC_ENTRY_BYTES * 2}, {24, 8, CVC_HEADER_BYTES + 8}, {32, 8, rd64(orig + 32) + 256},
        {40, 8, orig_size - 1}, {40, 8, orig_size + 1},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(bad); ++i) {
        memcpy(f, orig, CVC_HEADER_BYTES);
        if (bad[i].bytes == 4)
            wr32(f + bad[i].at, (uint32_t)bad[i].value);
        else
            wr64(f + bad[i].at, bad[i].value);
        wr32(f + 60, cvc_crc32(f, 60));   /* the index CRC stays the real one */
        expect_open(f, CONVCAT_ERR_CORRUPT, NULL);
    }
    memcpy(f, orig, CVC_HEADER_BYTES);
    wr32(f + 48, rd32(orig + 48) ^ 1);
    wr32(f + 60, cvc_crc32(f, 60));
    expect_open(f, CONVCAT_ERR_CORRUPT, "index checksum");
    free(f);
}

/* A header and no entries is a valid, empty catalog. */
static void test_empty_catalog_opens_with_no_entries(void)
{
    uint8_t h[CVC_HEADER_BYTES];
    memcpy(h, orig, sizeof h);
    wr32(h + 16, 0);
    wr64(h + 32, CVC_HEADER_BYTES);
    wr64(h + 40, CVC_HEADER_BYTES);
    wr32(h + 48, cvc_crc32(h, 0));
    wr32(h + 60, cvc_crc32(h, 60));
    convcat_catalog *c = NULL;
    UNIT_ASSERT_STATUS(convcat_open_memory(h, sizeof h, &c), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_count(c), 0);
    size_t at;
    convcat_entry_info e;
    UNIT_ASSERT_STATUS(convcat_find(c, "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", &at),
                       CONVCAT_ERR_NOT_FOUND);
    UNIT_ASSERT_STATUS(convcat_entry_info_get(c, 0, &e), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_close(c);
    wr64(h + 40, CVC_HEADER_BYTES + 1);   /* neighbour: the size disagrees */
    wr32(h + 60, cvc_crc32(h, 60));
    UNIT_ASSERT_STATUS(open_mem(h, sizeof h, NULL, 0), CONVCAT_ERR_CORRUPT);
}

static void test_random_garbage_is_corrupt(void)
{
    uint32_t x = 12345;
    uint8_t *g = malloc(orig_size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const size_t sizes[] = {1, 63, 64, 65, 300, 4096, orig_size};
    for (size_t i = 0; i < CVC_ARRAY_LEN(sizes); ++i) {
        for (int round = 0; round < 20; ++round) {
            for (size_t j = 0; j < sizes[i]; ++j) {
                x = x * 1664525u + 1013904223u;
                g[j] = (uint8_t)(x >> 24);
            }
            if (round % 2 && sizes[i] >= 8)
                memcpy(g, "CONVCAT", 8);   /* past the magic, into the checksums */
            UNIT_ASSERT_STATUS(open_mem(g, sizes[i], NULL, 0), CONVCAT_ERR_CORRUPT);
        }
    }
    /* A real header in front of garbage: the index checksum refuses it. */
    memcpy(g, orig, CVC_HEADER_BYTES);
    UNIT_ASSERT_STATUS(open_mem(g, orig_size, NULL, 0), CONVCAT_ERR_CORRUPT);
    free(g);
}

/* ---- files ---------------------------------------------------------------------------- */

static convcat_status open_path(const char *path, size_t *count)
{
    convcat_catalog *c = (convcat_catalog *)&c;
    clear_last_error();
    const convcat_status st = convcat_open(path, &c);
    assert_failure_explained(st);
    if (st == CONVCAT_OK) {
        *count = convcat_count(c);
        convcat_close(c);
    } else {
        CU_ASSERT_PTR_NULL(c);
    }
    return st;
}

static char *temp_file(const void *data, size_t size)
{
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *path = malloc(strlen(dir) + 32);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    sprintf(path, "%s/convcat-test-XXXXXX", dir);
    const int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, data, size) == (ssize_t)size);
    close(fd);
    return path;
}

static void test_file_paths(void)
{
    size_t count = 0;
    UNIT_ASSERT_STATUS(open_path(catalog_path, &count), CONVCAT_OK);
    UNIT_ASSERT_STATUS(open_path("/nonexistent/convcat.catalog", &count), CONVCAT_ERR_IO);
    UNIT_ASSERT_STATUS(open_path("", &count), CONVCAT_ERR_IO);
    UNIT_ASSERT_STATUS(open_path("/", &count), CONVCAT_ERR_IO);
    UNIT_ASSERT_STATUS(open_path("/dev/null", &count), CONVCAT_ERR_IO);

    char *empty = temp_file("", 0);
    UNIT_ASSERT_STATUS(open_path(empty, &count), CONVCAT_ERR_CORRUPT);
    char *valid = temp_file(orig, orig_size);
    count = 0;
    UNIT_ASSERT_STATUS(open_path(valid, &count), CONVCAT_OK);
    CU_ASSERT_EQUAL(count, count_of(orig));
    char *cut = temp_file(orig, orig_size - 1);
    UNIT_ASSERT_STATUS(open_path(cut, &count), CONVCAT_ERR_CORRUPT);
    /* Unreadable: only when not running as root, who reads anything. */
    if (geteuid() != 0) {
        CU_ASSERT_EQUAL(chmod(valid, 0), 0);
        UNIT_ASSERT_STATUS(open_path(valid, &count), CONVCAT_ERR_IO);
    }
    unlink(empty), unlink(valid), unlink(cut);
    free(empty), free(valid), free(cut);
}

/* ---- arguments and lifetimes ---------------------------------------------------------------- */

static void expect_invalid(convcat_status st)
{
    UNIT_ASSERT_STATUS(st, CONVCAT_ERR_INVALID_ARGUMENT);
    assert_failure_explained(st);
}

static void test_null_arguments_are_invalid(void)
{
    convcat_catalog *c = NULL;
    convcat_entry_info e;
    size_t at;
    clear_last_error();
    expect_invalid(convcat_open(NULL, &c));
    clear_last_error();
    expect_invalid(convcat_open(catalog_path, NULL));
    clear_last_error();
    expect_invalid(convcat_open_memory(NULL, 64, &c));
    clear_last_error();
    expect_invalid(convcat_open_memory(orig, orig_size, NULL));
    clear_last_error();
    expect_invalid(convcat_entry_info_get(NULL, 0, &e));
    clear_last_error();
    expect_invalid(convcat_entry_info_get(cat, 0, NULL));
    clear_last_error();
    convcat_entry_info_get(cat, 0, &e);
    clear_last_error();
    expect_invalid(convcat_find(NULL, e.key, &at));
    clear_last_error();
    expect_invalid(convcat_find(cat, NULL, &at));
    clear_last_error();
    expect_invalid(convcat_find(cat, e.key, NULL));
    CU_ASSERT_EQUAL(convcat_count(NULL), 0);
    convcat_close(NULL);
    /* Neighbour: the same calls with every argument given succeed. */
    UNIT_ASSERT_STATUS(convcat_find(cat, e.key, &at), CONVCAT_OK);
    UNIT_ASSERT_STATUS(convcat_entry_info_get(cat, 0, &e), CONVCAT_OK);
}

/* open_memory copies: the caller's buffer may change or go away. Several catalogs live at once. */
static void test_memory_catalog_outlives_its_buffer(void)
{
    uint8_t *f = copy_of_catalog();
    convcat_catalog *a = NULL, *b = NULL;
    UNIT_ASSERT_STATUS(convcat_open_memory(f, orig_size, &a), CONVCAT_OK);
    UNIT_ASSERT_STATUS(convcat_open(catalog_path, &b), CONVCAT_OK);
    CU_ASSERT_FATAL(a && b);
    memset(f, 0xAB, orig_size);
    free(f);
    for (size_t i = 0; i < convcat_count(b); ++i) {
        convcat_entry_info ea, eb;
        size_t at;
        UNIT_ASSERT_STATUS(convcat_entry_info_get(a, i, &ea), CONVCAT_OK);
        UNIT_ASSERT_STATUS(convcat_entry_info_get(b, i, &eb), CONVCAT_OK);
        CU_ASSERT_STRING_EQUAL(ea.key, eb.key);
        CU_ASSERT_PTR_NOT_EQUAL(ea.key, eb.key);
        UNIT_ASSERT_STATUS(convcat_find(a, eb.key, &at), CONVCAT_OK);
        CU_ASSERT_EQUAL(at, i);
        CU_ASSERT_EQUAL(memcmp(a->entries[i].code, b->entries[i].code, b->entries[i].code_size), 0);
        CU_ASSERT_EQUAL((uintptr_t)a->entries[i].code % 8, 0);   /* fatbins need 8-byte alignment */
    }
    convcat_close(b);
    CU_ASSERT_EQUAL(convcat_count(a), count_of(orig));
    convcat_close(a);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"real catalog has entries", test_real_catalog_has_entries},
        {"keys are sorted and unique", test_keys_are_sorted_and_unique},
        {"find finds every key", test_find_finds_every_key},
        {"find refuses unknown keys", test_find_refuses_unknown_keys},
        {"entry info agrees with the key", test_entry_info_agrees_with_the_key},
        {"entry info refuses an index past the end", test_entry_info_refuses_an_index_past_the_end},
        {"crc32 is zlib's", test_crc32_is_zlibs},
        {"truncated catalogs are corrupt", test_truncated_catalogs_are_corrupt},
        {"a flipped byte is corrupt", test_a_flipped_byte_is_corrupt},
        {"version bumps are version errors", test_version_bumps_are_version_errors},
        {"index fields disagreeing with the key are corrupt", test_index_fields_disagreeing_with_the_key_are_corrupt},
        {"halo boxes must match the tile", test_halo_boxes_must_match_the_tile},
        {"dynamic cluster shapes are checked at open", test_dynamic_cluster_shapes_are_checked_at_open},
        {"launch fields are range-checked", test_launch_fields_are_range_checked},
        {"unsorted or duplicate keys are corrupt", test_unsorted_or_duplicate_keys_are_corrupt},
        {"blobs outside the file are corrupt", test_blobs_outside_the_file_are_corrupt},
        {"nonzero reserved bytes are corrupt", test_nonzero_reserved_bytes_are_corrupt},
        {"inconsistent header fields are corrupt", test_inconsistent_header_fields_are_corrupt},
        {"empty catalog opens with no entries", test_empty_catalog_opens_with_no_entries},
        {"random garbage is corrupt", test_random_garbage_is_corrupt},
        {"file paths", test_file_paths},
        {"NULL arguments are invalid", test_null_arguments_are_invalid},
        {"memory catalog outlives its buffer", test_memory_catalog_outlives_its_buffer},
        CU_TEST_INFO_NULL,
    };
    return unit_main("catalog", tests, setup, teardown);
}
