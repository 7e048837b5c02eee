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

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (p[i])
            return false;
    return true;
}

/* One index record -> entry, checked against the key and the file. */
static convcat_status read_entry(const uint8_t *file, size_t file_size, uint64_t blobs_offset,
                                 size_t i, const uint8_t *r, cvc_entry *e)
{
    char why[192];
    if (memchr(r, '\0', CVC_KEY_BYTES) == NULL)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu: key is not NUL-terminated", i);
    memcpy(e->key, r, CVC_KEY_BYTES);
    if (!all_zero(r + strlen(e->key), CVC_KEY_BYTES - strlen(e->key)))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu: bytes after the key are not zero", i);
    if (!cvc_key_parse(e->key, &e->k, why, sizeof why))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu: %s", i, why);
    const cvc_key *k = &e->k;
    const bool fields_match =
        r[112] == k->arch && r[113] == k->op && r[114] == k->dims && r[115] == k->a &&
        r[116] == k->b && r[117] == k->acc && r[118] == k->out && r[119] == k->schedule &&
        rd16(r + 120) == k->tile_m && rd16(r + 122) == k->tile_n && rd16(r + 124) == k->tile_k &&
        r[126] == k->stages && r[127] == k->cluster_m && r[128] == k->cluster_n && r[129] == 0;
    if (!fields_match)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu (%s): index fields disagree with the key",
                        i, e->key);
    if (r[172] != k->fallback_m || r[173] != k->fallback_n)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu (%s): fallback cluster fields disagree with the key",
                        i, e->key);
    if (!cvc_dynamic_cluster_valid(k, why, sizeof why))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu: %s", i, why);
    if (!all_zero(r + 178, CVC_ENTRY_BYTES - 178))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu (%s): reserved bytes are not zero", i, e->key);
    e->threads = rd16(r + 130);
    e->smem_bytes = (int)rd32(r + 132);
    e->registers = rd16(r + 136);
    e->a_box_rows = rd16(r + 138);
    e->a_box_cols = rd16(r + 140);
    e->b_box_rows = rd16(r + 142);
    e->b_box_cols = rd16(r + 144);
    e->swizzle_bytes = rd16(r + 146);
    e->y_box_rows = rd16(r + 168);
    e->y_box_cols = rd16(r + 170);
    e->fb_a_box_rows = rd16(r + 174);
    e->fb_b_box_rows = rd16(r + 176);
    if (cvc_key_dynamic(k) ? e->fb_a_box_rows == 0 || e->fb_b_box_rows == 0 : e->fb_a_box_rows || e->fb_b_box_rows)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu (%s): fallback box fields %s", i, e->key,
                        cvc_key_dynamic(k) ? "are zero for a dynamic cluster" : "are set for a static cluster");
    if (e->threads == 0 || e->threads > 1024 || e->smem_bytes < 0 || e->a_box_rows == 0 ||
        e->a_box_cols == 0 || e->b_box_rows == 0 || e->b_box_cols == 0 || e->y_box_rows == 0 ||
        e->y_box_cols == 0)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog entry %zu (%s): launch or TMA box fields out of range",
                        i, e->key);
    /* A halo kernel's input tile and epilogue chunk are compile-time shapes of its block of tile_m / 8
     * rows: boxes of other sizes would deliver other byte counts than its barriers wait for. */
    if (k->schedule == CONVCAT_HALO &&
        (k->tile_m % CVC_HALO_COLS || e->a_box_rows != cvc_halo_tile_rows(k) ||
         e->y_box_rows % (2 * CVC_HALO_COLS) || k->tile_m % e->y_box_rows))
        return cvc_fail(CONVCAT_ERR_CORRUPT,
                        "catalog entry %zu (%s): halo box fields disagree with the tile (input tile of %d rows, "
                        "chunks of %d pixels)", i, e->key, e->a_box_rows, e->y_box_rows);
    const uint32_t crc = rd32(r + 148);
    const uint64_t off = rd64(r + 152), size = rd64(r + 160);
    if (size == 0 || off < blobs_offset || off % CVC_BLOB_ALIGN || off > file_size ||
        size > file_size - off)
        return cvc_fail(CONVCAT_ERR_CORRUPT,
                        "catalog entry %zu (%s): code blob [%llu, +%llu) lies outside the file (%zu bytes)",
                        i, e->key, (unsigned long long)off, (unsigned long long)size, file_size);
    e->code = file + off;
    e->code_size = (size_t)size;
    const uint32_t got = cvc_crc32(e->code, e->code_size);
    if (got != crc)
        return cvc_fail(CONVCAT_ERR_CORRUPT,
                        "catalog entry %zu (%s): code checksum 0x%08x, index says 0x%08x", i, e->key,
                        got, crc);
    e->library = e->kernel = NULL;
    return CONVCAT_OK;
}

static convcat_status parse(convcat_catalog *cat)
{
    const uint8_t *f = cat->data;
    const size_t size = cat->size;
    if (size < CVC_HEADER_BYTES || memcmp(f, CVC_MAGIC, 8) != 0)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "not a convcat catalog (no CONVCAT header in the first %u bytes)",
                        CVC_HEADER_BYTES);
    const uint32_t hcrc = cvc_crc32(f, 60);
    if (hcrc != rd32(f + 60))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog header checksum 0x%08x, header says 0x%08x", hcrc,
                        rd32(f + 60));
    const uint32_t version = rd32(f + 8), abi = rd32(f + 12);
    if (version != CVC_FORMAT_VERSION)
        return cvc_fail(CONVCAT_ERR_VERSION, "catalog format version %u; this runtime reads version %u",
                        version, CVC_FORMAT_VERSION);
    if (abi != CONVCAT_KERNEL_ABI)
        return cvc_fail(CONVCAT_ERR_VERSION,
                        "catalog kernels use parameter ABI %u; this runtime passes ABI %u: rebuild one of them",
                        abi, CONVCAT_KERNEL_ABI);
    const uint32_t count = rd32(f + 16), entry_size = rd32(f + 20);
    const uint64_t index_off = rd64(f + 24), blobs_off = rd64(f + 32), file_size = rd64(f + 40);
    if (file_size != size)
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog is %zu bytes, its header says %llu (truncated or padded)",
                        size, (unsigned long long)file_size);
    if (entry_size != CVC_ENTRY_BYTES || index_off != CVC_HEADER_BYTES ||
        blobs_off != index_off + (uint64_t)count * entry_size || blobs_off > size ||
        !all_zero(f + 52, 8))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog header fields are inconsistent (%u entries of %u bytes)",
                        count, entry_size);
    const uint32_t icrc = cvc_crc32(f + index_off, (size_t)count * entry_size);
    if (icrc != rd32(f + 48))
        return cvc_fail(CONVCAT_ERR_CORRUPT, "catalog index checksum 0x%08x, header says 0x%08x", icrc,
                        rd32(f + 48));
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
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
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
        .fallback_m = e->k.fallback_m, .fallback_n = e->k.fallback_n};
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

convcat_status cvc_entry_kernel(convcat_catalog *cat, cvc_entry *e, void **kernel_out)
{
    const cvc_driver *drv;
    convcat_status st = cvc_driver_get(&drv);
    if (st != CONVCAT_OK)
        return st;
    pthread_mutex_lock(&cat->lock);
    if (!e->kernel) {
        CUlibrary lib = NULL;
        CUkernel kern = NULL;
        st = cvc_cuda_check(drv->cuLibraryLoadData(&lib, e->code, NULL, NULL, 0, NULL, NULL, 0),
                            "cuLibraryLoadData");
        if (st == CONVCAT_OK) {
            /* Helpers beside the kernel: wgrad's split-K reduction, a scattering dgrad's phase fill. */
            CUkernel helper = NULL;
            const char *suffix = cvc_splits_k(&e->k) ? "_reduce" : cvc_dgrad_scatters(&e->k) ? "_fill" : NULL;
            char name[CVC_KEY_BYTES + 16];
            snprintf(name, sizeof name, "%s%s", e->key, suffix ? suffix : "");
            st = cvc_cuda_check(drv->cuLibraryGetKernel(&kern, lib, e->key), "cuLibraryGetKernel");
            if (st == CONVCAT_OK && suffix)
                st = cvc_cuda_check(drv->cuLibraryGetKernel(&helper, lib, name), "cuLibraryGetKernel (helper)");
            CUkernel transpose = NULL;
            snprintf(name, sizeof name, "%s_transpose", e->key);
            if (st == CONVCAT_OK && cvc_transposes_filter(&e->k))
                st = cvc_cuda_check(drv->cuLibraryGetKernel(&transpose, lib, name), "cuLibraryGetKernel (transpose)");
            CUkernel strided = NULL;   /* sm90a: stride phases run a kernel of their own */
            snprintf(name, sizeof name, "%s_strided", e->key);
            if (st == CONVCAT_OK && e->k.arch == CONVCAT_ARCH_SM90A && cvc_dgrad_scatters(&e->k))
                st = cvc_cuda_check(drv->cuLibraryGetKernel(&strided, lib, name), "cuLibraryGetKernel (strided)");
            if (st == CONVCAT_OK) {
                e->library = lib;
                e->kernel = kern;
                e->helper = helper;
                e->transpose = transpose;
                e->strided = strided;
            } else {
                drv->cuLibraryUnload(lib);
            }
        }
    }
    *kernel_out = e->kernel;
    pthread_mutex_unlock(&cat->lock);
    return st;
}
