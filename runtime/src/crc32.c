/* crc32.c: CRC-32 (IEEE 802.3, reflected 0xEDB88320), the checksum zlib and
 * Python's zlib.crc32 compute; the catalog packer uses the latter. */
#include <pthread.h>

#include "internal.h"

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
}

uint32_t cvc_crc32(const void *data, size_t size)
{
    pthread_once(&table_once, make_table);
    const uint8_t *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i)
        c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}
