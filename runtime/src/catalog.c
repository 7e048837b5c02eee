/* catalog.c: open, verify and index a catalog file; load an entry's code on first use.
 *
 * Verification happens once, at open, before anything is trusted: header
 * magic, versions, sizes and offsets against the file size, both checksums,
 * every index record (key grammar, fields equal to what the key says,
 * reserved bytes zero, strictly sorted keys), every blob's bounds and
 * checksum.  A file that fails any of these is refused with the reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "internal.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) | (uint32_t)rd16(p + 2) << 16; }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32; }

/* Field NAME of an index record or of the header, by its generated offset and size. */
static uint64_t rd_field(const uint8_t *r, unsigned off, unsigned size)
{
    return size == 1 ? r[off] : size == 2 ? rd16(r + off) : size == 4 ? rd32(r + off) : rd64(r + off);
}
#define IX(r, NAME) rd_field((r), CVC_IX_##NAME##_OFF, CVC_IX_##NAME##_SIZE)
#define HD(f, NAME) rd_field((f), CVC_HD_##NAME##_OFF, CVC_HD_##NAME##_SIZE)

CVC_INDEX_LAYOUT_CHECK_ENUMS();

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (p[i])
            return false;
    return true;
}

/* The fields of a record that its key fixes, checked against the parsed key. */
static bool key_fields_match(const uint8_t *r, const cvc_key *k)
{
    return IX(r, ARCH) == (uint64_t)k->arch && IX(r, OP) == (uint64_t)k->op && IX(r, DIMS) == (uint64_t)k->dims &&
           IX(r, A) == (uint64_t)k->a && IX(r, B) == (uint64_t)k->b && IX(r, ACC) == (uint64_t)k->acc &&
           IX(r, OUT) == (uint64_t)k->out && IX(r, SCHEDULE) == (uint64_t)k->schedule &&
           IX(r, TILE_M) == (uint64_t)k->tile_m && IX(r, TILE_N) == (uint64_t)k->tile_n &&
           IX(r, TILE_K) == (uint64_t)k->tile_k && IX(r, STAGES) == (uint64_t)k->stages &&
           IX(r, CLUSTER_M) == (uint64_t)k->cluster_m && IX(r, CLUSTER_N) == (uint64_t)k->cluster_n &&
           IX(r, FALLBACK_M) == (uint64_t)k->fallback_m && IX(r, FALLBACK_N) == (uint64_t)k->fallback_n;
}

/* The family a schedule's kernels belong to: what the key's schedule allows. */
static int family_of(convcat_schedule s)
{
    return s == CONVCAT_GATHER ? CVC_FAMILY_GATHER : s == CONVCAT_DIRECT ? CVC_FAMILY_DIRECT : CVC_FAMILY_TMA;
}

#define BAD(...) return cvc_fail(CONVCAT_ERR_CORRUPT, __VA_ARGS__)

/* The derived fields of an entry: within the ranges every runtime computation assumes, so that
 * a catalog whose checksums pass cannot make the runtime divide by zero, overrun a buffer or
 * launch what the device cannot. */
static convcat_status check_derived(size_t i, const cvc_entry *e)
{
    const cvc_key *k = &e->k;
    if (e->family != family_of(k->schedule))
        BAD("catalog entry %zu (%s): family %d is not the schedule's", i, e->key, e->family);
    if (e->threads < 32 || e->threads > 1024 || e->threads % 32 || e->smem_bytes < 0 || e->smem_bytes > 232448)
        BAD("catalog entry %zu (%s): launch fields out of range (%d threads, %d bytes of shared memory)", i, e->key,
            e->threads, e->smem_bytes);
    if (e->flags & ~CVC_F_ALL)
        BAD("catalog entry %zu (%s): unknown capability flags 0x%x", i, e->key, e->flags & ~CVC_F_ALL);
    if (e->c_align < 1 || e->k_align < 1 || e->groups_mode > CVC_GROUPS_PACKED)
        BAD("catalog entry %zu (%s): alignment or group fields out of range", i, e->key);
    if (e->family == CVC_FAMILY_TMA) {
        const int swz = e->swizzle_bytes;
        if ((swz != 32 && swz != 64 && swz != 128) || e->a_box_rows == 0 || e->a_box_cols == 0 ||
            e->b_box_rows == 0 || e->b_box_cols == 0 || e->y_box_rows == 0 || e->y_box_cols == 0 ||
            e->a_box_rows > 256 || e->a_box_cols > 256 || e->b_box_rows > 256 || e->b_box_cols > 256 ||
            e->y_box_rows > 256 || e->y_box_cols > 256)
            BAD("catalog entry %zu (%s): TMA box or swizzle fields out of range", i, e->key);
        if (cvc_key_dynamic(k) ? e->fb_a_box_rows == 0 || e->fb_b_box_rows == 0 : e->fb_a_box_rows || e->fb_b_box_rows)
            BAD("catalog entry %zu (%s): fallback box fields %s", i, e->key,
                cvc_key_dynamic(k) ? "are zero for a dynamic cluster" : "are set for a static cluster");
        /* A halo kernel's input tile and epilogue chunk are compile-time shapes of its block:
         * boxes of other sizes would deliver other byte counts than its barriers wait for. */
        const bool halo = (e->flags & CVC_F_HALO) != 0;
        if (halo != (k->schedule == CONVCAT_HALO) ||
            (halo && (e->halo_cols < 8 || k->tile_m % e->halo_cols || e->a_box_rows != e->halo_tile_rows ||
                      e->halo_tile_rows != k->tile_m / e->halo_cols + e->halo_reach ||
                      e->y_box_rows % (2 * e->halo_cols) || k->tile_m % e->y_box_rows)))
            BAD("catalog entry %zu (%s): halo fields disagree with the tile (input tile of %d rows, chunks of %d "
                "pixels)", i, e->key, e->a_box_rows, e->y_box_rows);
        if (e->groups_mode == CVC_GROUPS_DIAGONAL && (k->op != CONVCAT_WGRAD || k->tile_m != k->tile_n))
            BAD("catalog entry %zu (%s): diagonal groups on a kernel that is not a square wgrad tile", i, e->key);
        if ((e->groups_mode == CVC_GROUPS_PACKED) != (k->schedule == CONVCAT_GROUPED) ||
            (cvc_has(e, CVC_F_DGRAD_AS_FPROP | CVC_F_WIDENS_GROUPS) &&
             (k->schedule != CONVCAT_GROUPED || k->op != CONVCAT_FPROP)))
            BAD("catalog entry %zu (%s): packed groups, dgrad as fprop and widened groups are the grouped schedule's, "
                "and only its", i, e->key);
        if (e->groups_mode == CVC_GROUPS_ANY || e->groups_mode == CVC_GROUPS_DEPTHWISE || e->max_stride < 1)
            BAD("catalog entry %zu (%s): a TMA kernel with %s", i, e->key,
                e->max_stride < 1 ? "no stride limit" : "pointer-family group support");
    } else {
        if (e->vec_mask < 1 || e->vec_mask > 15)
            BAD("catalog entry %zu (%s): load widths 0x%x out of range", i, e->key, e->vec_mask);
        if (k->tile_m < 1 || k->tile_n < 1 || k->tile_k < 1)
            BAD("catalog entry %zu (%s): empty tile", i, e->key);
        if (e->family == CVC_FAMILY_DIRECT &&
            (e->block_vec < 1 || e->block_vec > 8 || k->tile_k % e->block_vec || e->block_strip < 1 ||
             k->tile_n % e->block_strip || e->block_run > k->tile_m || e->groups_mode != CVC_GROUPS_DEPTHWISE ||
             !(e->group_c_mask & 1u) ||   /* groups of c: fprop/dgrad within a vector, wgrad any even c to 256 */
             e->group_c_mask >= (k->op == CONVCAT_WGRAD ? 512u : 2u * (unsigned)e->block_vec)))
            BAD("catalog entry %zu (%s): direct block fields disagree with the tile", i, e->key);
        if (e->family == CVC_FAMILY_DIRECT && k->op == CONVCAT_WGRAD && k->stages == 1 &&
            (e->unit_taps < 1 || e->ring_taps < 1 || e->max_taps < e->unit_taps))
            BAD("catalog entry %zu (%s): direct wgrad tap units out of range (%d taps a unit, %d a ring pass)", i,
                e->key, e->unit_taps, e->ring_taps);
        if (e->family == CVC_FAMILY_DIRECT &&
            ((k->stages > 1) != (e->stage_pixel_bytes > 0) ||
             (e->stage_pixel_bytes > 0 && (e->stage_pixel_bytes % 16 ||
                                           e->stage_pixel_bytes < k->tile_k * cvc_dtype_bytes(k->a) || k->dims != 2))))
            BAD("catalog entry %zu (%s): staged direct fields disagree with the key (%d bytes a tile pixel)", i, e->key,
                e->stage_pixel_bytes);
        if (e->family == CVC_FAMILY_GATHER && !cvc_has(e, CVC_F_INPUT_TILE) && e->groups_mode != CVC_GROUPS_ANY)
            BAD("catalog entry %zu (%s): a gather kernel without any-group support", i, e->key);
        if (cvc_has(e, CVC_F_INPUT_TILE) &&
            (e->family != CVC_FAMILY_GATHER || k->stages != 1 || k->dims == 3 || e->groups_mode != CVC_GROUPS_NONE ||
             k->tile_k != 16 ||
             !(k->op == CONVCAT_WGRAD   ? k->tile_m == 32 || k->tile_m == 64
               : k->op == CONVCAT_DGRAD ? (k->tile_m == 64 || k->tile_m == 128) && k->tile_n % 8 == 0 && k->tile_n <= 64
                                        : k->tile_m == 128) ||
             cvc_has(e, CVC_F_SPLITS_K) != (k->op == CONVCAT_WGRAD)))
            BAD("catalog entry %zu (%s): an input-tile kernel that is not a one-stage 1D or 2D gather fprop of 128 x N "
                "x 16 tiles, dgrad of 64 or 128 x N x 16 (N of whole n8 atoms, at most 64) or wgrad of 32 or 64 x N x 16 "
                "tiles that splits K, of one group", i, e->key);
    }
    /* The slices of a tile meet in a cluster only in the sm90a TMA wgrad kernels that have the code:
     * coop or pingpong tiles of 1x1 clusters that split K. */
    if (cvc_has(e, CVC_F_CLUSTER_SPLITS) &&
        (e->family != CVC_FAMILY_TMA || k->arch != CONVCAT_ARCH_SM90A || k->op != CONVCAT_WGRAD ||
         !cvc_has(e, CVC_F_SPLITS_K) || k->cluster_m * k->cluster_n != 1 ||
         (k->schedule != CONVCAT_COOP && k->schedule != CONVCAT_PINGPONG)))
        BAD("catalog entry %zu (%s): split-K in clusters on a kernel other than an sm90a TMA wgrad coop or pingpong "
            "tile of 1x1 clusters that splits K", i, e->key);
    /* Diagonal groups take c = 2^i channels a group for the mask's bits, c dividing a tile (<= 256);
     * other modes ignore the mask (the generator writes the space's for sm100a wgrad too). */
    if (e->group_c_mask >> 9 || (e->groups_mode == CVC_GROUPS_DIAGONAL && e->group_c_mask == 0))
        BAD("catalog entry %zu (%s): group channel mask 0x%x out of range for groups mode %d", i, e->key,
            e->group_c_mask, e->groups_mode);
    return CONVCAT_OK;
}

/* One index record -> entry, checked against the key and the file. */
static convcat_status read_entry(const uint8_t *file, size_t file_size, uint64_t blobs_offset, size_t i,
                                 const uint8_t *r, cvc_entry *e)
{
    char why[192];
    if (memchr(r, '\0', CVC_KEY_BYTES) == NULL)
        BAD("catalog entry %zu: key is not NUL-terminated", i);
    memcpy(e->key, r, CVC_KEY_BYTES);
    if (!all_zero(r + strlen(e->key), CVC_KEY_BYTES - strlen(e->key)))
        BAD("catalog entry %zu: bytes after the key are not zero", i);
    if (!cvc_key_parse(e->key, &e->k, why, sizeof why))
        BAD("catalog entry %zu: %s", i, why);
    const cvc_key *k = &e->k;
    if (!key_fields_match(r, k))
        BAD("catalog entry %zu (%s): index fields disagree with the key", i, e->key);
    if (!cvc_dynamic_cluster_valid(k, why, sizeof why))
        BAD("catalog entry %zu: %s", i, why);
    if (!all_zero(r + CVC_IX_RESERVED_OFF, CVC_ENTRY_BYTES - CVC_IX_RESERVED_OFF))
        BAD("catalog entry %zu (%s): reserved bytes are not zero", i, e->key);
    e->family = (int)IX(r, FAMILY);
    e->threads = (int)IX(r, THREADS);
    e->smem_bytes = (int)IX(r, SMEM_BYTES);
    e->registers = (int)IX(r, REGISTERS);
    e->a_box_rows = (int)IX(r, A_BOX_ROWS);
    e->a_box_cols = (int)IX(r, A_BOX_COLS);
    e->b_box_rows = (int)IX(r, B_BOX_ROWS);
    e->b_box_cols = (int)IX(r, B_BOX_COLS);
    e->swizzle_bytes = (int)IX(r, SWIZZLE_BYTES);
    e->y_box_rows = (int)IX(r, Y_BOX_ROWS);
    e->y_box_cols = (int)IX(r, Y_BOX_COLS);
    e->fb_a_box_rows = (int)IX(r, FB_A_BOX_ROWS);
    e->fb_b_box_rows = (int)IX(r, FB_B_BOX_ROWS);
    e->flags = (uint32_t)IX(r, FLAGS);
    e->acc_regs = (int)IX(r, ACC_REGS);
    e->wg_n = (int)IX(r, WG_N);
    e->mma_n = (int)IX(r, MMA_N);
    e->c_align = (int)IX(r, C_ALIGN);
    e->k_align = (int)IX(r, K_ALIGN);
    e->max_stride = (int)IX(r, MAX_STRIDE);
    e->groups_mode = (int)IX(r, GROUPS_MODE);
    e->group_c_mask = (uint32_t)IX(r, GROUP_C_MASK);
    e->halo_cols = (int)IX(r, HALO_COLS);
    e->halo_reach = (int)IX(r, HALO_REACH);
    e->halo_tile_rows = (int)IX(r, HALO_TILE_ROWS);
    e->vec_mask = (int)IX(r, VEC_MASK);
    e->block_vec = (int)IX(r, BLOCK_VEC);
    e->block_strip = (int)IX(r, BLOCK_STRIP);
    e->block_run = (int)IX(r, BLOCK_RUN);
    e->max_taps = (int)IX(r, MAX_TAPS);
    e->a_stage_bytes = (int)IX(r, A_STAGE_BYTES);
    e->b_stage_bytes = (int)IX(r, B_STAGE_BYTES);
    e->epi_bytes = (int)IX(r, EPI_BYTES);
    e->row_mask = (int)IX(r, ROW_MASK);
    e->group_row_mask = (int)IX(r, GROUP_ROW_MASK);
    e->unit_taps = (int)IX(r, UNIT_TAPS);
    e->ring_taps = (int)IX(r, RING_TAPS);
    e->stage_pixel_bytes = (int)IX(r, STAGE_PIXEL_BYTES);
    convcat_status st = check_derived(i, e);
    if (st != CONVCAT_OK)
        return st;
    const uint32_t crc = (uint32_t)IX(r, BLOB_CRC);
    const uint64_t off = IX(r, BLOB_OFFSET), size = IX(r, BLOB_SIZE);
    if (size == 0 || off < blobs_offset || off % CVC_BLOB_ALIGN || off > file_size || size > file_size - off)
        BAD("catalog entry %zu (%s): code blob [%llu, +%llu) lies outside the file (%zu bytes)", i, e->key,
            (unsigned long long)off, (unsigned long long)size, file_size);
    e->code = file + off;
    e->code_size = (size_t)size;
    const uint32_t got = cvc_crc32(e->code, e->code_size);
    if (got != crc)
        BAD("catalog entry %zu (%s): code checksum 0x%08x, index says 0x%08x", i, e->key, got, crc);
    e->library = e->kernel = NULL;
    return CONVCAT_OK;
}

static convcat_status parse(convcat_catalog *cat)
{
    const uint8_t *f = cat->data;
    const size_t size = cat->size;
    if (size < CVC_HEADER_BYTES || memcmp(f, "CONVCAT", CVC_HD_MAGIC_SIZE) != 0)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "not a convcat catalog (no CONVCAT header in the first %u bytes)",
                        CVC_HEADER_BYTES);
    const uint32_t hcrc = cvc_crc32(f, CVC_HD_HEADER_CRC_OFF);
    if (hcrc != HD(f, HEADER_CRC))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog header checksum 0x%08x, header says 0x%08x", hcrc,
                        (uint32_t)HD(f, HEADER_CRC));
    const uint32_t version = (uint32_t)HD(f, FORMAT_VERSION), abi = (uint32_t)HD(f, KERNEL_ABI);
    if (version != CVC_FORMAT_VERSION)
        return cvc_fail(CONVCAT_ERR_VERSION, "catalog format version %u; this runtime reads version %u: rebuild "
                        "the catalog with this convcat (meson setup, ninja)", version, CVC_FORMAT_VERSION);
    if (abi != CONVCAT_KERNEL_ABI)
        return cvc_fail(CONVCAT_ERR_VERSION,
                        "catalog kernels use parameter ABI %u; this runtime passes ABI %u: rebuild one of them",
                        abi, CONVCAT_KERNEL_ABI);
    const uint32_t count = (uint32_t)HD(f, COUNT), entry_size = (uint32_t)HD(f, ENTRY_BYTES);
    const uint64_t index_off = HD(f, INDEX_OFFSET), blobs_off = HD(f, BLOBS_OFFSET), file_size = HD(f, FILE_SIZE);
    if (file_size != size)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog is %zu bytes, its header says %llu (truncated or padded)",
                        size, (unsigned long long)file_size);
    if (entry_size != CVC_ENTRY_BYTES || index_off != CVC_HEADER_BYTES ||
        blobs_off != index_off + (uint64_t)count * entry_size || blobs_off > size ||
        !all_zero(f + CVC_HD_RESERVED_OFF, CVC_HD_RESERVED_SIZE))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog header fields are inconsistent (%u entries of %u bytes)",
                        count, entry_size);
    const uint32_t icrc = cvc_crc32(f + index_off, (size_t)count * entry_size);
    if (icrc != HD(f, INDEX_CRC))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog index checksum 0x%08x, header says 0x%08x", icrc,
                        (uint32_t)HD(f, INDEX_CRC));
    cat->count = count;
    cat->id = icrc;
    cat->entries = calloc(count ? count : 1, sizeof *cat->entries);
    if (!cat->entries)
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory indexing %u catalog entries", count);
    for (size_t i = 0; i < count; ++i) {
        cvc_entry *e = &cat->entries[i];
        convcat_status st = read_entry(f, size, blobs_off, i, f + index_off + i * entry_size, e);
        if (st != CONVCAT_OK)
            return st;
        if (i > 0 && strcmp(cat->entries[i - 1].key, e->key) >= 0)
            return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog index is not sorted by key at entry %zu (%s)", i,
                            e->key);
    }
    return CONVCAT_OK;
}

static convcat_status finish_open(convcat_catalog *cat, convcat_catalog **out)
{
    pthread_mutex_init(&cat->lock, NULL);
    convcat_status st = parse(cat);
    if (st != CONVCAT_OK) {
        convcat_close(cat);
        return st;
    }
    *out = cat;
    return CONVCAT_OK;
}

convcat_status convcat_open(const char *path, convcat_catalog **out)
{
    if (!path || !out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_open: path and catalog_out must not be NULL");
    *out = NULL;
    /* O_NONBLOCK: a FIFO (or a device) opens at once instead of waiting for a writer, and is then
     * refused as not a regular file; on a regular file the flag means nothing. */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return cvc_fail(CONVCAT_ERR_IO, "cannot open catalog %s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return cvc_fail(CONVCAT_ERR_IO, "catalog %s is not a regular file", path);
    }
    if (sb.st_size == 0) {
        close(fd);
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog %s is empty", path);
    }
    void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return cvc_fail(CONVCAT_ERR_IO, "cannot map catalog %s: %s", path, strerror(errno));
    convcat_catalog *cat = calloc(1, sizeof *cat);
    if (!cat) {
        munmap(map, (size_t)sb.st_size);
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory opening %s", path);
    }
    cat->data = map;
    cat->size = (size_t)sb.st_size;
    cat->mapped = true;
    return finish_open(cat, out);
}

convcat_status convcat_open_memory(const void *data, size_t size, convcat_catalog **out)
{
    if (!data || !out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_open_memory: data and catalog_out must not be NULL");
    *out = NULL;
    convcat_catalog *cat = calloc(1, sizeof *cat);
    /* Aligned copy: fatbins inside must stay 8-byte aligned. */
    uint8_t *copy = aligned_alloc(CVC_BLOB_ALIGN, (size + CVC_BLOB_ALIGN - 1) / CVC_BLOB_ALIGN * CVC_BLOB_ALIGN + CVC_BLOB_ALIGN);
    if (!cat || !copy) {
        free(cat);
        free(copy);
        return cvc_fail(CONVCAT_ERR_NO_MEMORY, "out of memory copying a %zu-byte catalog", size);
    }
    memcpy(copy, data, size);
    cat->data = copy;
    cat->size = size;
    return finish_open(cat, out);
}

void convcat_close(convcat_catalog *cat)
{
    if (!cat)
        return;
    const cvc_driver *drv;
    for (size_t i = 0; cat->entries && i < cat->count; ++i)
        if (cat->entries[i].library && cvc_driver_get(&drv) == CONVCAT_OK)
            drv->cuLibraryUnload((CUlibrary)cat->entries[i].library);
    free(cat->entries);
    if (cat->mapped)
        munmap(cat->data, cat->size);
    else
        free(cat->data);
    pthread_mutex_destroy(&cat->lock);
    free(cat);
}

size_t convcat_count(const convcat_catalog *cat)
{
    return cat ? cat->count : 0;
}

convcat_status convcat_entry_info_get(const convcat_catalog *cat, size_t index, convcat_entry_info *info)
{
    if (!cat || !info || index >= cat->count)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_entry_info_get: no entry %zu", index);
    const cvc_entry *e = &cat->entries[index];
    *info = (convcat_entry_info){
        .key = e->key, .arch = e->k.arch, .op = e->k.op, .dims = e->k.dims,
        .a_type = e->k.a, .b_type = e->k.b, .acc_type = e->k.acc, .out_type = e->k.out,
        .tile_m = e->k.tile_m, .tile_n = e->k.tile_n, .tile_k = e->k.tile_k,
        .stages = e->k.stages, .cluster_m = e->k.cluster_m, .cluster_n = e->k.cluster_n,
        .schedule = e->k.schedule, .threads = e->threads, .smem_bytes = e->smem_bytes,
        .registers = e->registers, .code_bytes = e->code_size,
        .fallback_m = e->k.fallback_m, .fallback_n = e->k.fallback_n, .family = (convcat_family)e->family,
        .verified = cvc_has(e, CVC_F_VERIFIED), .groups_mode = e->groups_mode};
    return CONVCAT_OK;
}

convcat_status convcat_find(const convcat_catalog *cat, const char *key, size_t *index_out)
{
    if (!cat || !key || !index_out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_find: NULL argument");
    size_t lo = 0, hi = cat->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = strcmp(cat->entries[mid].key, key);
        if (c == 0) {
            *index_out = mid;
            return CONVCAT_OK;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return cvc_fail(CONVCAT_ERR_NOT_FOUND, "no kernel '%s' in the catalog", key);
}

/* A helper kernel `suffix` of the entry's library, if its flags say it exports one. */
static convcat_status helper_kernel(const cvc_driver *drv, CUlibrary lib, const cvc_entry *e, bool exported,
                                    const char *suffix, CUkernel *out)
{
    *out = NULL;
    if (!exported)
        return CONVCAT_OK;
    char name[CVC_KEY_BYTES + 16];
    snprintf(name, sizeof name, "%s%s", e->key, suffix);
    return cvc_cuda_check(drv->cuLibraryGetKernel(out, lib, name), "cuLibraryGetKernel (helper)");
}

convcat_status cvc_entry_kernel(convcat_catalog *cat, cvc_entry *e, void **kernel_out)
{
    const cvc_driver *drv;
    convcat_status st = cvc_driver_get(&drv);
    if (st != CONVCAT_OK)
        return st;
    pthread_mutex_lock(&cat->lock);
    if (!e->kernel) {
        CUlibrary lib = NULL;
        CUkernel kern = NULL, helper = NULL, fill = NULL, transpose = NULL, turn = NULL, strided = NULL;
        st = cvc_cuda_check(drv->cuLibraryLoadData(&lib, e->code, NULL, NULL, 0, NULL, NULL, 0),
                            "cuLibraryLoadData");
        if (st == CONVCAT_OK)
            st = cvc_cuda_check(drv->cuLibraryGetKernel(&kern, lib, e->key), "cuLibraryGetKernel");
        /* The helpers beside the kernel: the split-K reduction, a scattering dgrad's phase fill,
         * tf32 dgrad's filter copy, the grouped schedule's turned or widened filter, sm90a stride phases' kernel. */
        if (st == CONVCAT_OK)
            st = helper_kernel(drv, lib, e, cvc_has(e, CVC_F_SPLITS_K), "_reduce", &helper);
        if (st == CONVCAT_OK)
            st = helper_kernel(drv, lib, e, cvc_has(e, CVC_F_SCATTERS), "_fill", &fill);
        if (st == CONVCAT_OK)
            st = helper_kernel(drv, lib, e, cvc_has(e, CVC_F_TRANSPOSES_FILTER), "_transpose", &transpose);
        if (st == CONVCAT_OK)
            st = helper_kernel(drv, lib, e, cvc_has(e, CVC_F_DGRAD_AS_FPROP | CVC_F_WIDENS_GROUPS), "_regroup", &turn);
        if (st == CONVCAT_OK)
            st = helper_kernel(drv, lib, e, cvc_has(e, CVC_F_STRIDED_KERNEL), "_strided", &strided);
        if (st == CONVCAT_OK) {
            e->library = lib;
            e->kernel = kern;
            e->helper = helper ? helper : fill;
            e->transpose = transpose ? transpose : turn;   /* a kernel has one filter copy at most */
            e->strided = strided;
        } else if (lib) {
            drv->cuLibraryUnload(lib);
        }
    }
    *kernel_out = e->kernel;
    pthread_mutex_unlock(&cat->lock);
    return st;
}
