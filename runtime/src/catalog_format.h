/* catalog_format.h: the catalog file, byte by byte.
 *
 * catalog/pack.py writes it, runtime/src/catalog.c reads it; both follow this
 * table (tests/ check the pair on packer-made files).  All integers are
 * little-endian.
 *
 * Header, 64 bytes at offset 0:
 *   0  char[8]  magic "CONVCAT\0"
 *   8  u32      format version (CVC_FORMAT_VERSION)
 *  12  u32      kernel ABI (CONVCAT_KERNEL_ABI of templates/include/convcat_kernel_abi.h)
 *  16  u32      entry count
 *  20  u32      entry size (CVC_ENTRY_BYTES)
 *  24  u64      index offset (64)
 *  32  u64      blobs offset (index offset + count * entry size)
 *  40  u64      file size
 *  48  u32      CRC-32 of the index bytes
 *  52  u32[2]   reserved, zero
 *  60  u32      CRC-32 of header bytes 0..59
 *
 * Index: `count` entries of CVC_ENTRY_BYTES, sorted by key (strcmp order), keys unique:
 *   0  char[112] key, NUL-padded (the key string also fixes every field below it up to 129)
 * 112  u8  arch (convcat_arch)         113 u8 op (convcat_op)      114 u8 dims
 * 115  u8  A type   116 u8 B type   117 u8 accumulator type   118 u8 output type (convcat_dtype)
 * 119  u8  schedule (convcat_schedule)
 * 120  u16 tile M   122 u16 tile N   124 u16 tile K
 * 126  u8  stages   127 u8 cluster M  128 u8 cluster N   129 u8 reserved (0)
 * 130  u16 threads per CTA
 * 132  u32 dynamic shared memory bytes
 * 136  u16 registers per thread (ptxas)
 * 138  u16 A box rows (im2col pixelsPerColumn of one load)
 * 140  u16 A box columns (channelsPerPixel)
 * 142  u16 B box rows   144 u16 B box columns
 * 146  u16 swizzle bytes
 * 148  u32 CRC-32 of the code blob
 * 152  u64 blob offset (from file start, 256-byte aligned, >= blobs offset)
 * 160  u64 blob size (a fatbin made by `fatbinary`)
 * 168  u16 output box rows  170 u16 output box columns (the epilogue's TMA store box)
 * 172  u8  fallback cluster M   173 u8 fallback cluster N (a dynamic cluster's, as the key says; 0: static)
 * 174  u16 fallback A box rows  176 u16 fallback B box rows (the fallback shape's slices; 0: static)
 * 178  78 bytes reserved, zero
 *
 * Blobs follow the index; each is one fatbin.
 * CRC-32 is the IEEE 802.3 polynomial (zlib's crc32).
 */
#ifndef CONVCAT_CATALOG_FORMAT_H
#define CONVCAT_CATALOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define CVC_MAGIC "CONVCAT"          /* 7 chars + NUL = 8 bytes */
#define CVC_FORMAT_VERSION 2u
#define CVC_HEADER_BYTES 64u
#define CVC_ENTRY_BYTES 256u
#define CVC_KEY_BYTES 112u
#define CVC_BLOB_ALIGN 256u

uint32_t cvc_crc32(const void *data, size_t size);

#endif
