/* discover.c: find the catalog when the caller names none.
 *
 * The places, in order (convcat.h, convcat_default_catalog_path):
 *   1. $CONVCAT_CATALOG, when set and not empty, alone;
 *   2. the share/convcat/convcat.catalog of the prefix this code was loaded
 *      from: dladdr names the file holding this function (libconvcat.so in
 *      LIBDIR, or an executable in BINDIR that links the static library),
 *      and the install layout's relative path leads from its directory to
 *      DATADIR (compiled in from meson: CVC_LIBDIR_TO_CATALOG,
 *      CVC_BINDIR_TO_CATALOG; empty where a directory is outside the prefix);
 *   3. the configured prefix's catalog (CVC_INSTALL_CATALOG).
 * The first regular file wins; failing that, the error names every place.
 */
#define _GNU_SOURCE   /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"

#ifndef CVC_INSTALL_CATALOG
#define CVC_INSTALL_CATALOG ""
#endif
#ifndef CVC_LIBDIR_TO_CATALOG
#define CVC_LIBDIR_TO_CATALOG ""
#endif
#ifndef CVC_BINDIR_TO_CATALOG
#define CVC_BINDIR_TO_CATALOG ""
#endif

/* Is `path` a regular file?  If not, why, into `why`. */
static bool is_file(const char *path, char *why, size_t n)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        cvc_say(why, n, "%s", strerror(errno));
        return false;
    }
    if (!S_ISREG(sb.st_mode)) {
        cvc_say(why, n, "not a regular file");
        return false;
    }
    return true;
}

/* The catalog beside the file this code was loaded from, or "" (with the reason in `why`). */
static void relocated_catalog(char *out, size_t n, char *why, size_t why_n)
{
    out[0] = '\0';
    Dl_info info;
    char self[PATH_MAX] = "";
    const char *rel;
    if (dladdr((void *)&convcat_default_catalog_path, &info) && info.dli_fname &&
        strncmp(strrchr(info.dli_fname, '/') ? strrchr(info.dli_fname, '/') + 1 : info.dli_fname, "libconvcat",
                10) == 0) {
        rel = CVC_LIBDIR_TO_CATALOG;   /* the shared library, in LIBDIR */
        if (!realpath(info.dli_fname, self))
            snprintf(self, sizeof self, "%s", info.dli_fname);
    } else {
        rel = CVC_BINDIR_TO_CATALOG;   /* an executable linking the objects (the convcat command) */
        const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        self[len > 0 ? len : 0] = '\0';
    }
    if (!*rel) {
        cvc_say(why, why_n, "the install directories are outside the prefix");
        return;
    }
    char *slash = strrchr(self, '/');
    if (!slash) {
        cvc_say(why, why_n, "the library's own path is unknown");
        return;
    }
    *slash = '\0';
    if (snprintf(out, n, "%s/%s", self, rel) >= (int)n) {
        out[0] = '\0';
        cvc_say(why, why_n, "path too long");
    }
}

/* Append "PLACE (WHY)" to the list of places tried. */
static void tried(char *list, size_t n, const char *place, const char *why)
{
    const size_t used = strlen(list);
    if (used < n)
        snprintf(list + used, n - used, "%s%s (%s)", used ? "; " : "", place, why);
}

convcat_status convcat_default_catalog_path(char *path_out, size_t size)
{
    if (!path_out || size == 0)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_default_catalog_path: NULL or empty buffer");
    path_out[0] = '\0';
    char list[1536] = "", why[256];
    const char *env = getenv("CONVCAT_CATALOG");
    const char *found = NULL;
    if (env && *env) {
        if (!is_file(env, why, sizeof why))
            return cvc_fail(CONVCAT_ERR_IO,
                            "no catalog at $CONVCAT_CATALOG=%s (%s); unset CONVCAT_CATALOG to use the installed one",
                            env, why);
        found = env;
    }
    char relocated[PATH_MAX + 64];
    if (!found) {
        tried(list, sizeof list, "$CONVCAT_CATALOG", "not set");
        relocated_catalog(relocated, sizeof relocated, why, sizeof why);
        if (!*relocated)
            tried(list, sizeof list, "the library's own prefix", why);
        else if (is_file(relocated, why, sizeof why)) {
            char canonical[PATH_MAX];   /* .../bin/../share/... read as .../share/... */
            if (realpath(relocated, canonical))
                snprintf(relocated, sizeof relocated, "%s", canonical);
            found = relocated;
        }
        else
            tried(list, sizeof list, relocated, why);
    }
    if (!found) {
        if (!*CVC_INSTALL_CATALOG)
            tried(list, sizeof list, "the configured prefix", "not compiled in");
        else if (strcmp(CVC_INSTALL_CATALOG, relocated) == 0)
            ;   /* the same place, already tried */
        else if (is_file(CVC_INSTALL_CATALOG, why, sizeof why))
            found = CVC_INSTALL_CATALOG;
        else
            tried(list, sizeof list, CVC_INSTALL_CATALOG, why);
    }
    if (!found)
        return cvc_fail(CONVCAT_ERR_IO, "no convcat catalog found; tried %s. Set CONVCAT_CATALOG or pass a path",
                        list);
    if (strlen(found) >= size)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_default_catalog_path: %zu bytes do not hold %s", size,
                        found);
    memcpy(path_out, found, strlen(found) + 1);
    return CONVCAT_OK;
}

convcat_status convcat_open_default(convcat_catalog **catalog_out)
{
    if (!catalog_out)
        return cvc_fail(CONVCAT_ERR_INVALID_ARGUMENT, "convcat_open_default: catalog_out is NULL");
    *catalog_out = NULL;
    char path[PATH_MAX + 64];
    convcat_status st = convcat_default_catalog_path(path, sizeof path);
    if (st != CONVCAT_OK)
        return st;
    st = convcat_open(path, catalog_out);
    if (st == CONVCAT_OK && cvc_log_enabled())
        cvc_log("catalog: opened %s (id %08x, %zu kernels)", path, convcat_catalog_id(*catalog_out),
                convcat_count(*catalog_out));
    return st;
}
