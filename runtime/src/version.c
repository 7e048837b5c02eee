/* version.c: what the library says about its own versions and a catalog's identity.
 *
 * The catalog format and kernel ABI are those the reader (catalog.c) checks,
 * taken from the headers that define them (cvc_index_layout.h,
 * convcat_kernel_abi.h): they are not restated here.
 */
#include "internal.h"

const char *convcat_version(void)
{
    return CONVCAT_VERSION;
}

unsigned convcat_catalog_format_version(void)
{
    return CVC_FORMAT_VERSION;
}

unsigned convcat_kernel_abi_version(void)
{
    return CONVCAT_KERNEL_ABI;
}

uint32_t convcat_catalog_id(const convcat_catalog *catalog)
{
    return catalog ? catalog->id : 0;
}
