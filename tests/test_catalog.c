/* test_catalog.c: opening, verifying and indexing catalog files (runtime/src/catalog.c).
 *
 * The real catalog the build made ($CONVCAT_TEST_CATALOG) must open and
 * answer for every key.  Then copies of it, damaged one way at a time, must
 * be refused with the right status and a message: where a test wants to get
 * past a checksum to reach a later check, it recomputes the checksums with
 * cvc_crc32, and it always shows that the same copy without the damage opens.
 * Every byte offset comes from the generated layout (cvc_index_layout.h,
 * generator/convcat_gen/index.py): CVC_HD_* for the header, CVC_IX_* for a record.
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

/* A little-endian field of `size` bytes at p. */
static uint64_t rd_le(const uint8_t *p, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = size; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

static void wr_le(uint8_t *p, unsigned size, uint64_t v)
{
    for (unsigned i = 0; i < size; ++i, v >>= 8)
        p[i] = (uint8_t)v;
}

/* Field NAME of a header (f) or an index record (r), by the generated offsets and sizes. */
#define HD_GET(f, NAME) rd_le((f) + CVC_HD_##NAME##_OFF, CVC_HD_##NAME##_SIZE)
#define HD_SET(f, NAME, v) wr_le((f) + CVC_HD_##NAME##_OFF, CVC_HD_##NAME##_SIZE, (uint64_t)(v))
#define IX_GET(r, NAME) rd_le((r) + CVC_IX_##NAME##_OFF, CVC_IX_##NAME##_SIZE)
#define IX_SET(r, NAME, v) wr_le((r) + CVC_IX_##NAME##_OFF, CVC_IX_##NAME##_SIZE, (uint64_t)(v))

/* Every field of a record and of the header, in byte order (index.RECORD, index.HEADER). */
typedef struct field {
    const char *name;
    unsigned off, size;
} field;
#define IX_FIELD(NAME) {#NAME, CVC_IX_##NAME##_OFF, CVC_IX_##NAME##_SIZE}
#define HD_FIELD(NAME) {#NAME, CVC_HD_##NAME##_OFF, CVC_HD_##NAME##_SIZE}
static const field record_fields[] = {
    IX_FIELD(KEY), IX_FIELD(ARCH), IX_FIELD(OP), IX_FIELD(DIMS), IX_FIELD(A), IX_FIELD(B), IX_FIELD(ACC),
    IX_FIELD(OUT), IX_FIELD(SCHEDULE), IX_FIELD(TILE_M), IX_FIELD(TILE_N), IX_FIELD(TILE_K), IX_FIELD(STAGES),
    IX_FIELD(CLUSTER_M), IX_FIELD(CLUSTER_N), IX_FIELD(FALLBACK_M), IX_FIELD(FALLBACK_N), IX_FIELD(FAMILY),
    IX_FIELD(THREADS), IX_FIELD(REGISTERS), IX_FIELD(SMEM_BYTES), IX_FIELD(BLOB_CRC), IX_FIELD(BLOB_OFFSET),
    IX_FIELD(BLOB_SIZE), IX_FIELD(A_BOX_ROWS), IX_FIELD(A_BOX_COLS), IX_FIELD(B_BOX_ROWS), IX_FIELD(B_BOX_COLS),
    IX_FIELD(SWIZZLE_BYTES), IX_FIELD(Y_BOX_ROWS), IX_FIELD(Y_BOX_COLS), IX_FIELD(FB_A_BOX_ROWS),
    IX_FIELD(FB_B_BOX_ROWS), IX_FIELD(FLAGS), IX_FIELD(ACC_REGS), IX_FIELD(WG_N), IX_FIELD(MMA_N),
    IX_FIELD(C_ALIGN), IX_FIELD(K_ALIGN), IX_FIELD(MAX_STRIDE), IX_FIELD(GROUPS_MODE), IX_FIELD(GROUP_C_MASK),
    IX_FIELD(HALO_COLS), IX_FIELD(HALO_REACH), IX_FIELD(HALO_TILE_ROWS), IX_FIELD(VEC_MASK), IX_FIELD(BLOCK_VEC),
    IX_FIELD(BLOCK_STRIP), IX_FIELD(MAX_TAPS), IX_FIELD(A_STAGE_BYTES), IX_FIELD(B_STAGE_BYTES),
    IX_FIELD(EPI_BYTES), IX_FIELD(BLOCK_RUN), IX_FIELD(ROW_MASK), IX_FIELD(GROUP_ROW_MASK), IX_FIELD(UNIT_TAPS),
    IX_FIELD(RING_TAPS), IX_FIELD(STAGE_PIXEL_BYTES),
};
static const field header_fields[] = {
    HD_FIELD(MAGIC), HD_FIELD(FORMAT_VERSION), HD_FIELD(KERNEL_ABI), HD_FIELD(COUNT), HD_FIELD(ENTRY_BYTES),
    HD_FIELD(INDEX_OFFSET), HD_FIELD(BLOBS_OFFSET), HD_FIELD(FILE_SIZE), HD_FIELD(INDEX_CRC), HD_FIELD(RESERVED),
    HD_FIELD(HEADER_CRC),
};

static uint32_t count_of(const uint8_t *f) { return (uint32_t)HD_GET(f, COUNT); }
static uint8_t *record(uint8_t *f, size_t i) { return f + CVC_HEADER_BYTES + i * CVC_ENTRY_BYTES; }

/* The first entry of `orig` with `family` (a schedule, or 0: any) whose key contains `part` (or NULL). */
static size_t find_entry(const uint8_t *f, int family, int schedule, const char *part)
{
    for (size_t i = 0; i < count_of(f); ++i) {
        const uint8_t *r = f + CVC_HEADER_BYTES + i * CVC_ENTRY_BYTES;
        if ((!family || (int)IX_GET(r, FAMILY) == family) && (!schedule || (int)IX_GET(r, SCHEDULE) == schedule) &&
            (!part || strstr((const char *)r, part)))
            return i;
    }
    return SIZE_MAX;
}

static uint8_t *copy_of_catalog(void)
{
    uint8_t *c = malloc(orig_size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    memcpy(c, orig, orig_size);
    return c;
}

/* Recompute the index CRC, then the header CRC, as the packer does. */
static void fix_header_crc(uint8_t *f)
{
    HD_SET(f, HEADER_CRC, cvc_crc32(f, CVC_HD_HEADER_CRC_OFF));
}

static void fix_crcs(uint8_t *f)
{
    HD_SET(f, INDEX_CRC, cvc_crc32(f + CVC_HEADER_BYTES, (size_t)count_of(f) * CVC_ENTRY_BYTES));
    fix_header_crc(f);
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
    CU_ASSERT_EQUAL(orig_size, HD_GET(orig, FILE_SIZE));
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

/* The generated layout: the fields tile each record and the header in order, the key's fields
 * end where CVC_IX_KEY_FIELDS_END says, the rest of a record is reserved. */
static void test_layout_macros_tile_the_record(void)
{
    unsigned at = 0;
    for (size_t i = 0; i < CVC_ARRAY_LEN(record_fields); ++i) {
        if (record_fields[i].off != at)
            printf("\n    record field %s at %u, wanted %u", record_fields[i].name, record_fields[i].off, at);
        CU_ASSERT_EQUAL(record_fields[i].off, at);
        CU_ASSERT_TRUE(record_fields[i].size >= 1);
        at = record_fields[i].off + record_fields[i].size;
    }
    CU_ASSERT_EQUAL(at, CVC_IX_RESERVED_OFF);   /* no field of the layout is missing from the table */
    CU_ASSERT_TRUE(CVC_IX_RESERVED_OFF < CVC_ENTRY_BYTES);
    CU_ASSERT_EQUAL(CVC_IX_KEY_SIZE, CVC_KEY_BYTES);
    CU_ASSERT_EQUAL(CVC_IX_KEY_FIELDS_END, CVC_IX_FALLBACK_N_OFF + CVC_IX_FALLBACK_N_SIZE);
    at = 0;
    for (size_t i = 0; i < CVC_ARRAY_LEN(header_fields); ++i) {
        CU_ASSERT_EQUAL(header_fields[i].off, at);
        at = header_fields[i].off + header_fields[i].size;
    }
    CU_ASSERT_EQUAL(at, CVC_HEADER_BYTES);
    CU_ASSERT_EQUAL(CVC_HD_HEADER_CRC_OFF + CVC_HD_HEADER_CRC_SIZE, CVC_HEADER_BYTES);
    CU_ASSERT_EQUAL(CVC_FORMAT_VERSION, 5u);
    CU_ASSERT_EQUAL(HD_GET(orig, FORMAT_VERSION), CVC_FORMAT_VERSION);
    CU_ASSERT_EQUAL(HD_GET(orig, ENTRY_BYTES), CVC_ENTRY_BYTES);
    CU_ASSERT_EQUAL(HD_GET(orig, INDEX_OFFSET), CVC_HEADER_BYTES);
    CU_ASSERT_EQUAL(memcmp(orig, "CONVCAT", CVC_HD_MAGIC_SIZE), 0);
}

/* entry_info agrees with the key, with the index bytes and with the packer's derivations. */
static void test_entry_info_agrees_with_the_key(void)
{
    const char *index_path = unit_env_path("CONVCAT_UNIT_INDEX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(index_path);
    convcat_catalog *index = NULL;
    UNIT_ASSERT_STATUS(convcat_open(index_path, &index), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(index);
    size_t compared = 0;
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
        CU_ASSERT_EQUAL(e.fallback_m, k.fallback_m);
        CU_ASSERT_EQUAL(e.fallback_n, k.fallback_n);
        CU_ASSERT_EQUAL(e.schedule, k.schedule);
        /* The family follows the schedule. */
        const convcat_family fam = k.schedule == CONVCAT_GATHER   ? CONVCAT_FAMILY_GATHER
                                   : k.schedule == CONVCAT_DIRECT ? CONVCAT_FAMILY_DIRECT
                                                                  : CONVCAT_FAMILY_TMA;
        CU_ASSERT_EQUAL(e.family, fam);
        /* The launch fields and capabilities are the index's bytes. */
        const uint8_t *r = record(orig, i);
        CU_ASSERT_STRING_EQUAL(e.key, (const char *)r);
        CU_ASSERT_EQUAL((uint64_t)e.family, IX_GET(r, FAMILY));
        CU_ASSERT_EQUAL((uint64_t)e.threads, IX_GET(r, THREADS));
        CU_ASSERT_EQUAL((uint64_t)e.smem_bytes, IX_GET(r, SMEM_BYTES));
        CU_ASSERT_EQUAL((uint64_t)e.registers, IX_GET(r, REGISTERS));
        CU_ASSERT_EQUAL((uint64_t)e.code_bytes, IX_GET(r, BLOB_SIZE));
        CU_ASSERT_EQUAL((uint64_t)e.groups_mode, IX_GET(r, GROUPS_MODE));
        CU_ASSERT_EQUAL(e.verified != 0, (IX_GET(r, FLAGS) & CVC_F_VERIFIED) != 0);
        if (fam == CONVCAT_FAMILY_TMA)   /* sm90a.py: 3 warpgroups; sm100.py: 6 warps */
            CU_ASSERT_EQUAL(e.threads, e.arch == CONVCAT_ARCH_SM100A ? 192 : 384);
        CU_ASSERT_TRUE(e.threads >= 32 && e.threads <= 1024 && e.threads % 32 == 0);
        CU_ASSERT_TRUE(e.registers > 0 && e.registers <= 255);
        CU_ASSERT_TRUE(e.smem_bytes > 0 && e.smem_bytes <= 232448);
        CU_ASSERT_TRUE(e.code_bytes > 0);
        /* Internals: every field as the packer wrote it, code inside the file. */
        const cvc_entry *ce = &cat->entries[i];
        CU_ASSERT_EQUAL((uint64_t)ce->a_box_rows, IX_GET(r, A_BOX_ROWS));
        CU_ASSERT_EQUAL((uint64_t)ce->b_box_cols, IX_GET(r, B_BOX_COLS));
        CU_ASSERT_EQUAL((uint64_t)ce->flags, IX_GET(r, FLAGS));
        CU_ASSERT_EQUAL((uint64_t)ce->c_align, IX_GET(r, C_ALIGN));
        CU_ASSERT_EQUAL((uint64_t)ce->group_c_mask, IX_GET(r, GROUP_C_MASK));
        CU_ASSERT_EQUAL((uint64_t)ce->vec_mask, IX_GET(r, VEC_MASK));
        CU_ASSERT_EQUAL((uint64_t)ce->max_taps, IX_GET(r, MAX_TAPS));
        CU_ASSERT_EQUAL((uint64_t)ce->epi_bytes, IX_GET(r, EPI_BYTES));
        CU_ASSERT_EQUAL(ce->swizzle_bytes, fam == CONVCAT_FAMILY_TMA ? 128 : 0);
        CU_ASSERT_TRUE(fam == CONVCAT_FAMILY_TMA ? ce->max_stride == 8 && ce->c_align >= 4
                                                 : ce->max_stride == 0 && ce->c_align == 1 && ce->vec_mask >= 1);
        /* The test index has the same record for the keys the suites name (pack.py both times). */
        size_t at;
        if (convcat_find(index, e.key, &at) == CONVCAT_OK) {
            const cvc_entry *want = &index->entries[at];
            CU_ASSERT_TRUE(ce->a_box_rows == want->a_box_rows && ce->a_box_cols == want->a_box_cols &&
                           ce->b_box_rows == want->b_box_rows && ce->b_box_cols == want->b_box_cols &&
                           ce->y_box_rows == want->y_box_rows && ce->y_box_cols == want->y_box_cols);
            CU_ASSERT_TRUE(ce->threads == want->threads && ce->smem_bytes == want->smem_bytes &&
                           ce->flags == want->flags && ce->groups_mode == want->groups_mode &&
                           ce->acc_regs == want->acc_regs && ce->vec_mask == want->vec_mask);
            CU_ASSERT_EQUAL(memcmp(record(orig, i) + CVC_IX_FAMILY_OFF, index->data + CVC_HEADER_BYTES +
                                   at * CVC_ENTRY_BYTES + CVC_IX_FAMILY_OFF, CVC_IX_REGISTERS_OFF - CVC_IX_FAMILY_OFF), 0);
            ++compared;
        }
        CU_ASSERT_TRUE(ce->code >= cat->data + HD_GET(orig, BLOBS_OFFSET) && ce->code + ce->code_size <= cat->data + cat->size);
        CU_ASSERT_EQUAL((uintptr_t)(ce->code - cat->data) % CVC_BLOB_ALIGN, 0);
        CU_ASSERT_EQUAL(cvc_crc32(ce->code, ce->code_size), IX_GET(r, BLOB_CRC));
        CU_ASSERT_PTR_NULL(ce->library);
    }
    CU_ASSERT_TRUE(compared > 0);
    convcat_close(index);
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

/* A FIFO (or any file that is not regular) is refused at once: opening it never waits for a writer. */
static void test_a_fifo_is_refused_without_waiting(void)
{
    char dir[] = "/tmp/convcat-test-catalog-XXXXXX", fifo[64];
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    convcat_catalog *c = NULL;
    alarm(20);   /* a hang fails the test instead of the suite's timeout */
    UNIT_ASSERT_STATUS(convcat_open(fifo, &c), CONVCAT_ERR_IO);
    alarm(0);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "is not a regular file");
    CU_ASSERT_PTR_NULL(c);
    UNIT_ASSERT_STATUS(convcat_open("/dev/null", &c), CONVCAT_ERR_IO);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "is not a regular file");
    unlink(fifo);
    rmdir(dir);
}

static void test_truncated_catalogs_are_corrupt(void)
{
    const uint64_t blobs = HD_GET(orig, BLOBS_OFFSET);
    const size_t lengths[] = {0, 1, CVC_HD_MAGIC_SIZE - 1, CVC_HD_MAGIC_SIZE, CVC_HEADER_BYTES - 1, CVC_HEADER_BYTES,
                              CVC_HEADER_BYTES + 1, CVC_HEADER_BYTES + CVC_ENTRY_BYTES / 2,
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

/* A bit flipped anywhere (the checksums not recomputed) is refused: the first and last byte of
 * every header field, of every record field of the first and last entry, of their reserved
 * tails, and of their code blobs. */
static void test_a_flipped_byte_is_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const uint32_t n = count_of(orig);
    size_t offsets[512], k = 0;
    for (size_t j = 0; j < CVC_ARRAY_LEN(header_fields); ++j) {
        offsets[k++] = header_fields[j].off;
        offsets[k++] = header_fields[j].off + header_fields[j].size - 1;
    }
    for (size_t e = 0; e < n; e += n - 1) {
        const size_t base = CVC_HEADER_BYTES + e * CVC_ENTRY_BYTES;
        for (size_t j = 0; j < CVC_ARRAY_LEN(record_fields); ++j) {
            offsets[k++] = base + record_fields[j].off;
            if (record_fields[j].size > 1)
                offsets[k++] = base + record_fields[j].off + record_fields[j].size - 1;
        }
        offsets[k++] = base + CVC_IX_RESERVED_OFF;
        offsets[k++] = base + CVC_ENTRY_BYTES - 1;
        /* blobs: first, middle and last byte */
        const uint64_t off = IX_GET(record(orig, e), BLOB_OFFSET), size = IX_GET(record(orig, e), BLOB_SIZE);
        offsets[k++] = off;
        offsets[k++] = off + size / 2;
        offsets[k++] = off + size - 1;
        if (n == 1)
            break;
    }
    CU_ASSERT_FATAL(k <= CVC_ARRAY_LEN(offsets));
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
    HD_SET(f, FORMAT_VERSION, CVC_FORMAT_VERSION + 1);
    expect_open(f, CONVCAT_ERR_CORRUPT, "header checksum");   /* the header CRC comes first */
    fix_crcs(f);
    char want[64];
    snprintf(want, sizeof want, "format version %u", CVC_FORMAT_VERSION + 1);
    expect_open(f, CONVCAT_ERR_VERSION, want);
    HD_SET(f, FORMAT_VERSION, CVC_FORMAT_VERSION - 1);   /* a catalog of the previous format (v2) */
    fix_crcs(f);
    snprintf(want, sizeof want, "format version %u; this runtime reads version %u", CVC_FORMAT_VERSION - 1,
             CVC_FORMAT_VERSION);
    expect_open(f, CONVCAT_ERR_VERSION, want);
    HD_SET(f, FORMAT_VERSION, 0);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_VERSION, "format version 0");
    HD_SET(f, FORMAT_VERSION, CVC_FORMAT_VERSION);
    HD_SET(f, KERNEL_ABI, CONVCAT_KERNEL_ABI + 1);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_VERSION, "ABI");
    HD_SET(f, KERNEL_ABI, CONVCAT_KERNEL_ABI);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

/* The record's bytes from CVC_IX_ARCH_OFF to CVC_IX_KEY_FIELDS_END are fixed by the key (a dynamic
 * cluster's fallback shape too): each one changed is refused. */
static void test_index_fields_disagreeing_with_the_key_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t dyn = find_entry(orig, CVC_FAMILY_TMA, 0, "f2x1_");
    const size_t which[] = {0, count_of(orig) - 1, dyn};
    for (size_t w = 0; w < CVC_ARRAY_LEN(which); ++w) {
        if (which[w] == SIZE_MAX)
            continue;
        for (size_t at = CVC_IX_ARCH_OFF; at < CVC_IX_KEY_FIELDS_END; ++at) {
            uint8_t *r = record(f, which[w]);
            const uint8_t saved = r[at];
            r[at] = (uint8_t)(saved + 1);
            fix_crcs(f);
            expect_open(f, CONVCAT_ERR_CORRUPT, "index fields disagree with the key");
            r[at] = saved;
        }
    }
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

/* A TMA entry's fallback box rows are set exactly when its key has a fallback cluster. */
static void test_fallback_boxes_follow_the_key(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t stat = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_COOP, NULL);
    const size_t dyn = find_entry(orig, CVC_FAMILY_TMA, 0, "f1x1_");
    CU_ASSERT_FATAL(stat != SIZE_MAX);
    uint8_t *r = record(f, stat);
    CU_ASSERT_TRUE(IX_GET(r, FB_A_BOX_ROWS) == 0 && IX_GET(r, FB_B_BOX_ROWS) == 0);
    IX_SET(r, FB_A_BOX_ROWS, 64);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "fallback box fields are set for a static cluster");
    IX_SET(r, FB_A_BOX_ROWS, 0);
    IX_SET(r, FB_B_BOX_ROWS, 64);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "fallback box fields are set for a static cluster");
    IX_SET(r, FB_B_BOX_ROWS, 0);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    if (dyn == SIZE_MAX) {   /* the ci and default catalogs hold one */
        CU_FAIL("no dynamic-cluster entry in the catalog");
        free(f);
        return;
    }
    r = record(f, dyn);
    const uint64_t a = IX_GET(r, FB_A_BOX_ROWS), b = IX_GET(r, FB_B_BOX_ROWS);
    CU_ASSERT_TRUE(a > 0 && b > 0);
    IX_SET(r, FB_A_BOX_ROWS, 0);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "fallback box fields are zero for a dynamic cluster");
    IX_SET(r, FB_A_BOX_ROWS, a);
    IX_SET(r, FB_B_BOX_ROWS, 0);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "fallback box fields are zero for a dynamic cluster");
    IX_SET(r, FB_B_BOX_ROWS, b);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

/* A dynamic-cluster key whose shapes break the rules (here: fallback = preferred, made by
 * renaming the fallback of an entry and its fields) is refused at open, with the generator's reason. */
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
    const uint64_t cm = IX_GET(r, CLUSTER_M), cn = IX_GET(r, CLUSTER_N);
    IX_SET(r, FALLBACK_M, cm);   /* fallback = preferred: not smaller */
    IX_SET(r, FALLBACK_N, cn);
    char key[CVC_KEY_BYTES];
    snprintf(key, sizeof key, "%s", (const char *)r);
    char *fb = strstr(key, "f") ? strchr(strstr(key, "_c"), 'f') : NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(fb);
    fb[1] = (char)('0' + cm), fb[3] = (char)('0' + cn);
    memset(r, 0, CVC_KEY_BYTES);
    memcpy(r, key, strlen(key));
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "must be smaller than the preferred one");
    free(f);
}

/* One field of record `i` set to `bad`: refused at open with `mention`; set to `good`: opens. */
static void refuse_then_open(uint8_t *f, size_t i, unsigned off, unsigned size, uint64_t bad, uint64_t good,
                             const char *mention)
{
    uint8_t *r = record(f, i);
    const uint64_t saved = rd_le(r + off, size);
    wr_le(r + off, size, bad);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, mention);
    wr_le(r + off, size, good);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    wr_le(r + off, size, saved);
    fix_crcs(f);
}
#define REFUSE_THEN_OPEN(f, i, NAME, bad, good, mention) \
    refuse_then_open((f), (i), CVC_IX_##NAME##_OFF, CVC_IX_##NAME##_SIZE, (bad), (good), (mention))

/* Launch fields the key does not fix: any value in range opens; out of range is refused. */
static void test_launch_fields_are_range_checked(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t t = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_COOP, NULL);
    CU_ASSERT_FATAL(t != SIZE_MAX);
    const char *launch = "launch fields out of range", *boxes = "TMA box or swizzle fields out of range";
    REFUSE_THEN_OPEN(f, t, THREADS, 0, 32, launch);
    REFUSE_THEN_OPEN(f, t, THREADS, 1025, 1024, launch);
    REFUSE_THEN_OPEN(f, t, THREADS, 100, 96, launch);   /* whole warps */
    REFUSE_THEN_OPEN(f, t, THREADS, 16, 64, launch);
    REFUSE_THEN_OPEN(f, t, A_BOX_ROWS, 0, 8, boxes);
    REFUSE_THEN_OPEN(f, t, A_BOX_ROWS, 257, 256, boxes);
    REFUSE_THEN_OPEN(f, t, A_BOX_COLS, 0, 8, boxes);
    REFUSE_THEN_OPEN(f, t, B_BOX_ROWS, 0, 8, boxes);
    REFUSE_THEN_OPEN(f, t, B_BOX_COLS, 0, 8, boxes);
    REFUSE_THEN_OPEN(f, t, B_BOX_COLS, 300, 256, boxes);
    REFUSE_THEN_OPEN(f, t, Y_BOX_ROWS, 0, 32, boxes);
    REFUSE_THEN_OPEN(f, t, Y_BOX_COLS, 0, 32, boxes);
    REFUSE_THEN_OPEN(f, t, Y_BOX_COLS, 65535, 256, boxes);
    /* Shared memory is a u32 the runtime holds in an int: at most the 227 KiB a CTA may opt in to. */
    REFUSE_THEN_OPEN(f, t, SMEM_BYTES, UINT32_C(0x80000000), 232448, launch);
    REFUSE_THEN_OPEN(f, t, SMEM_BYTES, 232449, 0, launch);
    REFUSE_THEN_OPEN(f, t, SMEM_BYTES, UINT32_MAX, 1, launch);
    /* A changed launch field is what entry_info reports. */
    uint8_t *r = record(f, t);
    IX_SET(r, THREADS, 256);
    IX_SET(r, SMEM_BYTES, 1000);
    fix_crcs(f);
    convcat_catalog *c = NULL;
    UNIT_ASSERT_STATUS(convcat_open_memory(f, orig_size, &c), CONVCAT_OK);
    if (c) {
        convcat_entry_info e;
        UNIT_ASSERT_STATUS(convcat_entry_info_get(c, t, &e), CONVCAT_OK);
        CU_ASSERT_EQUAL(e.threads, 256);
        CU_ASSERT_EQUAL(e.smem_bytes, 1000);
        convcat_close(c);
    }
    free(f);
}

/* The derived fields every runtime computation assumes in range: a catalog whose checksums pass
 * but whose fields would make the runtime divide by zero, overrun a buffer or launch what the
 * device cannot is refused at open, with the reason (catalog.c, check_derived). */
static void test_derived_fields_are_range_checked(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t t = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_COOP, NULL);
    const size_t g = find_entry(orig, CVC_FAMILY_GATHER, 0, "_s3_c1x1_gather"),   /* pipelined: any groups */
                 d = find_entry(orig, CVC_FAMILY_DIRECT, 0, NULL);
    const size_t w = find_entry(orig, CVC_FAMILY_TMA, 0, "_wgrad_"), fp = find_entry(orig, CVC_FAMILY_TMA, 0, "_fprop_");
    CU_ASSERT_FATAL(t != SIZE_MAX && g != SIZE_MAX && d != SIZE_MAX && w != SIZE_MAX && fp != SIZE_MAX);
    const char *boxes = "TMA box or swizzle fields out of range";
    /* TMA: the swizzle span is 32, 64 or 128 bytes (the runtime divides by it). */
    REFUSE_THEN_OPEN(f, t, SWIZZLE_BYTES, 0, 64, boxes);
    REFUSE_THEN_OPEN(f, t, SWIZZLE_BYTES, 3, 32, boxes);
    REFUSE_THEN_OPEN(f, t, SWIZZLE_BYTES, 256, 128, boxes);
    /* Flags: only the known bits. */
    const uint64_t flags = IX_GET(record(orig, t), FLAGS);
    REFUSE_THEN_OPEN(f, t, FLAGS, flags | (CVC_F_ALL + 1), flags, "unknown capability flags");
    REFUSE_THEN_OPEN(f, t, FLAGS, flags | UINT32_C(0x80000000), flags | CVC_F_VERIFIED, "unknown capability flags 0x80000000");
    /* Split-K in clusters: sm90a TMA wgrad kernels that split K, of 1x1 clusters. */
    const char *ways = "split-K in clusters on a kernel other than";
    const uint64_t g_flags = IX_GET(record(orig, g), FLAGS), w_flags = IX_GET(record(orig, w), FLAGS),
                   fp_flags = IX_GET(record(orig, fp), FLAGS);
    REFUSE_THEN_OPEN(f, g, FLAGS, g_flags | CVC_F_CLUSTER_SPLITS, g_flags, ways);
    REFUSE_THEN_OPEN(f, fp, FLAGS, fp_flags | CVC_F_CLUSTER_SPLITS, fp_flags, ways);
    if (w_flags & CVC_F_CLUSTER_SPLITS)
        REFUSE_THEN_OPEN(f, w, FLAGS, w_flags & ~(uint64_t)CVC_F_SPLITS_K, w_flags, ways);
    /* Dgrad as fprop and widened groups: the grouped schedule's kernels export KEY_regroup, a coop
     * kernel does not. */
    REFUSE_THEN_OPEN(f, t, FLAGS, flags | CVC_F_DGRAD_AS_FPROP, flags, "widened groups are the grouped schedule's");
    REFUSE_THEN_OPEN(f, t, FLAGS, flags | CVC_F_WIDENS_GROUPS, flags, "widened groups are the grouped schedule's");
    /* The family is the schedule's: a TMA key's record saying gather (its launch would misread the
     * parameters), or no family at all. */
    REFUSE_THEN_OPEN(f, t, FAMILY, CVC_FAMILY_GATHER, CVC_FAMILY_TMA, "is not the schedule's");
    REFUSE_THEN_OPEN(f, t, FAMILY, 0, CVC_FAMILY_TMA, "family 0 is not the schedule's");
    REFUSE_THEN_OPEN(f, g, FAMILY, CVC_FAMILY_DIRECT, CVC_FAMILY_GATHER, "is not the schedule's");
    REFUSE_THEN_OPEN(f, d, FAMILY, 200, CVC_FAMILY_DIRECT, "family 200 is not the schedule's");
    /* Alignments divide the channel counts: never 0.  groups_mode is one of five; packed is the grouped
     * schedule's alone. */
    const char *align = "alignment or group fields out of range";
    REFUSE_THEN_OPEN(f, t, C_ALIGN, 0, 16, align);
    REFUSE_THEN_OPEN(f, t, K_ALIGN, 0, 16, align);
    REFUSE_THEN_OPEN(f, g, C_ALIGN, 0, 1, align);
    REFUSE_THEN_OPEN(f, t, GROUPS_MODE, CVC_GROUPS_PACKED + 1, CVC_GROUPS_NONE, align);
    REFUSE_THEN_OPEN(f, t, GROUPS_MODE, CVC_GROUPS_PACKED, CVC_GROUPS_NONE, "packed groups, dgrad as fprop and");
    /* A TMA kernel runs groups only on its diagonal blocks (square wgrad tiles) and has a stride limit. */
    REFUSE_THEN_OPEN(f, t, GROUPS_MODE, CVC_GROUPS_ANY, CVC_GROUPS_NONE, "a TMA kernel with pointer-family group support");
    REFUSE_THEN_OPEN(f, t, GROUPS_MODE, CVC_GROUPS_DEPTHWISE, CVC_GROUPS_NONE, "pointer-family group support");
    REFUSE_THEN_OPEN(f, t, MAX_STRIDE, 0, 4, "a TMA kernel with no stride limit");
    REFUSE_THEN_OPEN(f, fp, GROUPS_MODE, CVC_GROUPS_DIAGONAL, CVC_GROUPS_NONE,
                     "diagonal groups on a kernel that is not a square wgrad tile");
    /* gather and direct: load widths of 1..8 elements (bits 0..3), non-empty tiles. */
    REFUSE_THEN_OPEN(f, g, VEC_MASK, 0, 1, "load widths 0x0 out of range");
    REFUSE_THEN_OPEN(f, g, VEC_MASK, 16, 15, "load widths 0x10 out of range");
    REFUSE_THEN_OPEN(f, d, VEC_MASK, 0, 1, "load widths 0x0 out of range");
    REFUSE_THEN_OPEN(f, g, THREADS, 0, 128, "launch fields out of range");
    REFUSE_THEN_OPEN(f, g, GROUPS_MODE, CVC_GROUPS_NONE, CVC_GROUPS_ANY, "a gather kernel without any-group support");
    /* direct: a thread's channels (1..8) and outputs divide the block; groups_mode depthwise. */
    const char *block = "direct block fields disagree with the tile";
    const uint64_t vec = IX_GET(record(orig, d), BLOCK_VEC), strip = IX_GET(record(orig, d), BLOCK_STRIP);
    REFUSE_THEN_OPEN(f, d, BLOCK_VEC, 0, vec, block);
    REFUSE_THEN_OPEN(f, d, BLOCK_VEC, 16, vec, block);
    REFUSE_THEN_OPEN(f, d, BLOCK_VEC, 3, vec, block);   /* 3 divides no tile K of the space's direct kernels */
    REFUSE_THEN_OPEN(f, d, BLOCK_STRIP, 0, strip, block);
    REFUSE_THEN_OPEN(f, d, BLOCK_STRIP, 3, strip, block);
    REFUSE_THEN_OPEN(f, d, BLOCK_RUN, 255, 0, block);   /* a run unit past the block's rows */
    REFUSE_THEN_OPEN(f, d, GROUPS_MODE, CVC_GROUPS_ANY, CVC_GROUPS_DEPTHWISE, block);
    /* ... and its groups: one channel, and c = k up to a thread's vector (wgrad: to 256). */
    const uint64_t mask = IX_GET(record(orig, d), GROUP_C_MASK);
    REFUSE_THEN_OPEN(f, d, GROUP_C_MASK, mask & ~1ull, mask, block);
    REFUSE_THEN_OPEN(f, d, GROUP_C_MASK, mask | (IX_GET(record(orig, d), OP) == CONVCAT_WGRAD ? 512 : 2 * vec), mask, block);
    /* direct wgrad: a unit of taps and a ring pass hold one tap at least (the model divides by them). */
    const size_t dw = find_entry(orig, CVC_FAMILY_DIRECT, 0, "_wgrad_");
    CU_ASSERT_FATAL(dw != SIZE_MAX);
    const char *units = "direct wgrad tap units out of range";
    const uint64_t unit = IX_GET(record(orig, dw), UNIT_TAPS), ring = IX_GET(record(orig, dw), RING_TAPS);
    REFUSE_THEN_OPEN(f, dw, UNIT_TAPS, 0, unit, units);
    REFUSE_THEN_OPEN(f, dw, RING_TAPS, 0, ring, units);
    /* A diagonal wgrad entry may take the mode away (it then runs groups = 1 only). */
    if (IX_GET(record(orig, w), GROUPS_MODE) == CVC_GROUPS_DIAGONAL)
        REFUSE_THEN_OPEN(f, w, GROUPS_MODE, CVC_GROUPS_ANY, CVC_GROUPS_NONE, "pointer-family group support");
    expect_open(f, CONVCAT_OK, NULL);
    CU_ASSERT_EQUAL(memcmp(f, orig, orig_size), 0);   /* every surgery undone */
    free(f);
}

/* The channel counts a diagonal-group wgrad takes (bit i: 2^i channels a group) are powers of two
 * up to a tile's 256, and a diagonal entry has at least one.  A mask of every bit made the refusal that
 * lists them overrun its buffer (found by tests/fuzz/fuzz_catalog). */
static void test_group_channel_mask_is_range_checked(void)
{
    uint8_t *f = copy_of_catalog();
    size_t dg = SIZE_MAX;
    for (size_t i = 0; i < count_of(orig) && dg == SIZE_MAX; ++i)
        if (IX_GET(record(orig, i), GROUPS_MODE) == CVC_GROUPS_DIAGONAL)
            dg = i;
    const size_t t = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_COOP, "_fprop_");
    CU_ASSERT_FATAL(dg != SIZE_MAX && t != SIZE_MAX);   /* the ci and default catalogs hold grouped wgrad */
    const uint64_t mask = IX_GET(record(orig, dg), GROUP_C_MASK);
    CU_ASSERT_TRUE(mask != 0 && mask < 512);
    const char *says = "group channel mask";
    REFUSE_THEN_OPEN(f, dg, GROUP_C_MASK, UINT32_MAX, mask, says);
    REFUSE_THEN_OPEN(f, dg, GROUP_C_MASK, UINT32_C(0x80000000), 1, says);
    REFUSE_THEN_OPEN(f, dg, GROUP_C_MASK, 512, 256, says);
    REFUSE_THEN_OPEN(f, dg, GROUP_C_MASK, 0, mask, says);   /* diagonal groups of no channel count */
    REFUSE_THEN_OPEN(f, t, GROUP_C_MASK, UINT32_MAX, 0, says);   /* any entry: the mask is in range */
    expect_open(f, CONVCAT_OK, NULL);
    CU_ASSERT_EQUAL(memcmp(f, orig, orig_size), 0);
    free(f);
}

/* A halo entry's input tile and chunk geometry must be its tile's (compile-time in its code), and
 * the HALO flag its schedule's. */
static void test_halo_boxes_must_match_the_tile(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t halo = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_HALO, NULL);
    const size_t coop = find_entry(orig, CVC_FAMILY_TMA, CONVCAT_COOP, NULL);
    if (halo == SIZE_MAX || coop == SIZE_MAX) {   /* the ci and default catalogs hold one */
        CU_FAIL("no halo entry in the catalog");
        free(f);
        return;
    }
    const char *says = "halo fields disagree with the tile";
    const uint8_t *r = record(orig, halo);
    const uint64_t rows = IX_GET(r, A_BOX_ROWS), chunk = IX_GET(r, Y_BOX_ROWS), cols = IX_GET(r, HALO_COLS);
    const uint64_t reach = IX_GET(r, HALO_REACH), tile_rows = IX_GET(r, HALO_TILE_ROWS), flags = IX_GET(r, FLAGS);
    CU_ASSERT_TRUE((flags & CVC_F_HALO) && (flags & CVC_F_SWAPS) && rows == tile_rows && cols == 8 && reach == 2);
    REFUSE_THEN_OPEN(f, halo, A_BOX_ROWS, rows + 1, rows, says);
    REFUSE_THEN_OPEN(f, halo, Y_BOX_ROWS, chunk + 8, chunk, says);
    REFUSE_THEN_OPEN(f, halo, HALO_COLS, 0, cols, says);
    REFUSE_THEN_OPEN(f, halo, HALO_COLS, 7, cols, says);
    REFUSE_THEN_OPEN(f, halo, HALO_TILE_ROWS, tile_rows + 1, tile_rows, says);
    REFUSE_THEN_OPEN(f, halo, HALO_REACH, reach + 1, reach, says);
    REFUSE_THEN_OPEN(f, halo, FLAGS, flags & ~CVC_F_HALO, flags, says);   /* a halo key without its flag */
    const uint64_t coop_flags = IX_GET(record(orig, coop), FLAGS);
    REFUSE_THEN_OPEN(f, coop, FLAGS, coop_flags | CVC_F_HALO, coop_flags, says);   /* and the other way */
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
    const uint64_t off = IX_GET(r, BLOB_OFFSET), size = IX_GET(r, BLOB_SIZE), blobs = HD_GET(orig, BLOBS_OFFSET);
    CU_ASSERT_EQUAL(off + size, orig_size);   /* the last blob ends the file */
    const struct {
        uint64_t off, size;
    } bad[] = {
        {(orig_size + CVC_BLOB_ALIGN - 1) / CVC_BLOB_ALIGN * CVC_BLOB_ALIGN, size},   /* starts past the end */
        {UINT64_C(1) << 63, size},
        {UINT64_MAX - (CVC_BLOB_ALIGN - 1), 2 * CVC_BLOB_ALIGN},                  /* offset + size wraps */
        {off, size + 1},                                                           /* ends one byte past the end */
        {off, UINT64_MAX},
        {off, 0},                                                                  /* empty */
        {off + 1, size - 1},                                                       /* misaligned */
        {blobs / CVC_BLOB_ALIGN * CVC_BLOB_ALIGN, size},                           /* aligned, but inside the index */
        {0, size},                                                                 /* the header */
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(bad); ++i) {
        IX_SET(r, BLOB_OFFSET, bad[i].off);
        IX_SET(r, BLOB_SIZE, bad[i].size);
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "outside the file");
    }
    /* In bounds but another entry's bytes: the blob CRC catches it. */
    IX_SET(r, BLOB_OFFSET, IX_GET(record(orig, 0), BLOB_OFFSET));
    IX_SET(r, BLOB_SIZE, size);
    fix_crcs(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "code checksum");
    IX_SET(r, BLOB_OFFSET, off);
    fix_crcs(f);
    expect_open(f, CONVCAT_OK, NULL);
    free(f);
}

static void test_nonzero_reserved_bytes_are_corrupt(void)
{
    uint8_t *f = copy_of_catalog();
    const size_t reserved[] = {CVC_HD_RESERVED_OFF, CVC_HD_RESERVED_OFF + 3, CVC_HD_RESERVED_OFF + 4,
                               CVC_HD_RESERVED_OFF + CVC_HD_RESERVED_SIZE - 1};
    for (size_t i = 0; i < CVC_ARRAY_LEN(reserved); ++i) {
        f[reserved[i]] = 1;
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "header fields");
        f[reserved[i]] = 0;
    }
    uint8_t *r = record(f, 0);
    const size_t in_record[] = {CVC_IX_RESERVED_OFF, CVC_IX_RESERVED_OFF + 1,
                                (CVC_IX_RESERVED_OFF + CVC_ENTRY_BYTES) / 2, CVC_ENTRY_BYTES - 1};
    for (size_t i = 0; i < CVC_ARRAY_LEN(in_record); ++i) {
        r[in_record[i]] = 0x80;
        fix_crcs(f);
        expect_open(f, CONVCAT_ERR_CORRUPT, "reserved bytes are not zero");
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
    const uint64_t blobs = HD_GET(orig, BLOBS_OFFSET);
    const struct {
        unsigned off, size;
        uint64_t value;
    } bad[] = {
        {CVC_HD_COUNT_OFF, CVC_HD_COUNT_SIZE, n + 1},
        {CVC_HD_COUNT_OFF, CVC_HD_COUNT_SIZE, n - 1},
        {CVC_HD_COUNT_OFF, CVC_HD_COUNT_SIZE, UINT32_MAX},
        {CVC_HD_ENTRY_BYTES_OFF, CVC_HD_ENTRY_BYTES_SIZE, CVC_ENTRY_BYTES - 1},
        {CVC_HD_ENTRY_BYTES_OFF, CVC_HD_ENTRY_BYTES_SIZE, CVC_ENTRY_BYTES * 2},
        {CVC_HD_INDEX_OFFSET_OFF, CVC_HD_INDEX_OFFSET_SIZE, CVC_HEADER_BYTES + 8},
        {CVC_HD_BLOBS_OFFSET_OFF, CVC_HD_BLOBS_OFFSET_SIZE, blobs + CVC_BLOB_ALIGN},
        {CVC_HD_FILE_SIZE_OFF, CVC_HD_FILE_SIZE_SIZE, orig_size - 1},
        {CVC_HD_FILE_SIZE_OFF, CVC_HD_FILE_SIZE_SIZE, orig_size + 1},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(bad); ++i) {
        memcpy(f, orig, CVC_HEADER_BYTES);
        wr_le(f + bad[i].off, bad[i].size, bad[i].value);
        fix_header_crc(f);   /* the index CRC stays the real one */
        expect_open(f, CONVCAT_ERR_CORRUPT, NULL);
    }
    memcpy(f, orig, CVC_HEADER_BYTES);
    HD_SET(f, INDEX_CRC, HD_GET(orig, INDEX_CRC) ^ 1);
    fix_header_crc(f);
    expect_open(f, CONVCAT_ERR_CORRUPT, "index checksum");
    free(f);
}

/* A header and no entries is a valid, empty catalog. */
static void test_empty_catalog_opens_with_no_entries(void)
{
    uint8_t h[CVC_HEADER_BYTES];
    memcpy(h, orig, sizeof h);
    HD_SET(h, COUNT, 0);
    HD_SET(h, BLOBS_OFFSET, CVC_HEADER_BYTES);
    HD_SET(h, FILE_SIZE, CVC_HEADER_BYTES);
    HD_SET(h, INDEX_CRC, cvc_crc32(h, 0));
    fix_header_crc(h);
    convcat_catalog *c = NULL;
    UNIT_ASSERT_STATUS(convcat_open_memory(h, sizeof h, &c), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_count(c), 0);
    size_t at;
    convcat_entry_info e;
    UNIT_ASSERT_STATUS(convcat_find(c, "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x128x64_s4_c1x1_coop", &at),
                       CONVCAT_ERR_NOT_FOUND);
    UNIT_ASSERT_STATUS(convcat_entry_info_get(c, 0, &e), CONVCAT_ERR_INVALID_ARGUMENT);
    convcat_close(c);
    HD_SET(h, FILE_SIZE, CVC_HEADER_BYTES + 1);   /* neighbour: the size disagrees */
    fix_header_crc(h);
    UNIT_ASSERT_STATUS(open_mem(h, sizeof h, NULL, 0), CONVCAT_ERR_CORRUPT);
}

static void test_random_garbage_is_corrupt(void)
{
    uint32_t x = 12345;
    uint8_t *g = malloc(orig_size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const size_t sizes[] = {1, CVC_HEADER_BYTES - 1, CVC_HEADER_BYTES, CVC_HEADER_BYTES + 1, 300, 4096, orig_size};
    for (size_t i = 0; i < CVC_ARRAY_LEN(sizes); ++i) {
        for (int round = 0; round < 20; ++round) {
            for (size_t j = 0; j < sizes[i]; ++j) {
                x = x * 1664525u + 1013904223u;
                g[j] = (uint8_t)(x >> 24);
            }
            if (round % 2 && sizes[i] >= CVC_HD_MAGIC_SIZE)
                memcpy(g, "CONVCAT", CVC_HD_MAGIC_SIZE);   /* past the magic, into the checksums */
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
        {"layout macros tile the record", test_layout_macros_tile_the_record},
        {"entry info agrees with the key", test_entry_info_agrees_with_the_key},
        {"entry info refuses an index past the end", test_entry_info_refuses_an_index_past_the_end},
        {"crc32 is zlib's", test_crc32_is_zlibs},
        {"truncated catalogs are corrupt", test_truncated_catalogs_are_corrupt},
        {"a flipped byte is corrupt", test_a_flipped_byte_is_corrupt},
        {"version bumps are version errors", test_version_bumps_are_version_errors},
        {"index fields disagreeing with the key are corrupt", test_index_fields_disagreeing_with_the_key_are_corrupt},
        {"fallback boxes follow the key", test_fallback_boxes_follow_the_key},
        {"halo boxes must match the tile", test_halo_boxes_must_match_the_tile},
        {"dynamic cluster shapes are checked at open", test_dynamic_cluster_shapes_are_checked_at_open},
        {"launch fields are range-checked", test_launch_fields_are_range_checked},
        {"derived fields are range-checked", test_derived_fields_are_range_checked},
        {"group channel mask is range-checked", test_group_channel_mask_is_range_checked},
        {"a FIFO is refused without waiting", test_a_fifo_is_refused_without_waiting},
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
