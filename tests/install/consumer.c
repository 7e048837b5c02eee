/* consumer.c: a user's program against an installed convcat, built with only
 * pkg-config or find_package(convcat) (tests/install/run.sh).
 *
 *     consumer EXPECTED_CATALOG
 *
 * Opens the catalog with no path given (convcat_open_default, $CONVCAT_CATALOG
 * unset), checks it is the installed one, and queries a small problem of the
 * kind of its first kernel.  Prints what it found; exit 0 if a kernel can run it.
 */
#include <convcat.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: consumer EXPECTED_CATALOG\n");
        return 2;
    }
    if (getenv("CONVCAT_CATALOG")) {
        fprintf(stderr, "consumer: CONVCAT_CATALOG must be unset: the library is to find the catalog itself\n");
        return 2;
    }
    if (strcmp(convcat_version(), CONVCAT_VERSION) != 0) {
        fprintf(stderr, "consumer: header %s, library %s\n", CONVCAT_VERSION, convcat_version());
        return 1;
    }
#ifdef CONVCAT_CMAKE_CATALOG
    printf("CMake's CONVCAT_CATALOG: %s\n", CONVCAT_CMAKE_CATALOG);
    if (strcmp(CONVCAT_CMAKE_CATALOG, argv[1]) != 0) {
        fprintf(stderr, "consumer: CONVCAT_CATALOG from find_package is %s, not %s\n", CONVCAT_CMAKE_CATALOG, argv[1]);
        return 1;
    }
#endif
    char path[4096], found[PATH_MAX], want[PATH_MAX];
    convcat_catalog *cat;
    if (convcat_default_catalog_path(path, sizeof path) != CONVCAT_OK || convcat_open_default(&cat) != CONVCAT_OK) {
        fprintf(stderr, "consumer: %s\n", convcat_last_error());
        return 1;
    }
    if (!realpath(path, found) || !realpath(argv[1], want) || strcmp(found, want) != 0) {
        fprintf(stderr, "consumer: the library found %s, not the installed %s\n", path, argv[1]);
        return 1;
    }
    const size_t n = convcat_count(cat);
    printf("libconvcat %s, catalog %s: id %08x, %zu kernels\n", convcat_version(), path, convcat_catalog_id(cat), n);
    convcat_entry_info e;
    if (n == 0 || convcat_entry_info_get(cat, 0, &e) != CONVCAT_OK) {
        fprintf(stderr, "consumer: an empty catalog\n");
        return 1;
    }
    convcat_problem p;
    convcat_problem_init(&p);
    p.op = e.op, p.dims = e.dims, p.a_type = e.a_type, p.b_type = e.b_type, p.out_type = e.out_type;
    p.n = 2, p.c = 64, p.k = 64, p.w = 16, p.s = 3, p.pad_lo[2] = p.pad_hi[2] = 1;
    if (p.dims >= 2)
        p.h = 16, p.r = 3, p.pad_lo[1] = p.pad_hi[1] = 1;
    if (p.dims >= 3)
        p.d = 8, p.t = 3, p.pad_lo[0] = p.pad_hi[0] = 1;
    convcat_candidate *rows = calloc(n, sizeof *rows);
    size_t count = 0, ok = 0;
    if (!rows || convcat_query(cat, &p, CONVCAT_ARCH_ANY, 0, rows, n, &count, &ok) != CONVCAT_OK) {
        fprintf(stderr, "consumer: query: %s\n", convcat_last_error());
        return 1;
    }
    convcat_entry_info best;
    if (ok)
        convcat_entry_info_get(cat, rows[0].index, &best);
    printf("query %s %dD: %zu of %zu kernels can run it; best %s (%.1f us predicted)\n", convcat_op_name(p.op),
           p.dims, ok, count, ok ? best.key : "-", ok ? rows[0].predicted_us : 0.0);
    free(rows);
    convcat_close(cat);
    return ok ? 0 : 1;
}
