/* test_packaging.c: versions (version.c), finding the catalog (discover.c) and the opt-in log
 * (log.c), on the CPU.
 *
 * The version macros and convcat_version() say one version; the format and
 * ABI the library reports are those its reader checks; convcat_open_default
 * takes $CONVCAT_CATALOG alone when it is set, and otherwise names every
 * place it looked; the log reaches a callback and nothing else.  Needs no
 * particular kernel: any catalog ($CONVCAT_TEST_CATALOG) will do.
 */
#include <fcntl.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "unit.h"

static const char *catalog_path;

static int setup(void)
{
    catalog_path = unit_env_path("CONVCAT_TEST_CATALOG");
    return catalog_path ? 0 : -1;
}

static void test_versions_agree(void)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", CONVCAT_VERSION_MAJOR, CONVCAT_VERSION_MINOR, CONVCAT_VERSION_PATCH);
    CU_ASSERT_STRING_EQUAL(CONVCAT_VERSION, want);
    CU_ASSERT_STRING_EQUAL(convcat_version(), CONVCAT_VERSION);
    CU_ASSERT_EQUAL(CONVCAT_VERSION_NUMBER,
                    CONVCAT_VERSION_MAJOR * 10000 + CONVCAT_VERSION_MINOR * 100 + CONVCAT_VERSION_PATCH);
    CU_ASSERT_EQUAL(convcat_catalog_format_version(), CVC_FORMAT_VERSION);
    CU_ASSERT_EQUAL(convcat_kernel_abi_version(), CONVCAT_KERNEL_ABI);
}

static void test_catalog_id_is_the_index_crc(void)
{
    convcat_catalog *cat;
    UNIT_ASSERT_STATUS(convcat_open(catalog_path, &cat), CONVCAT_OK);
    CU_ASSERT_EQUAL(convcat_catalog_id(cat), cat->id);
    /* The header's index CRC, read from the file itself. */
    size_t size;
    uint8_t *bytes = unit_read_file(catalog_path, &size);
    CU_ASSERT_PTR_NOT_NULL_FATAL(bytes);
    CU_ASSERT_TRUE(size >= CVC_HEADER_BYTES);
    const uint32_t crc = (uint32_t)bytes[48] | (uint32_t)bytes[49] << 8 | (uint32_t)bytes[50] << 16 |
                         (uint32_t)bytes[51] << 24;
    CU_ASSERT_EQUAL(convcat_catalog_id(cat), crc);
    CU_ASSERT_EQUAL(convcat_catalog_id(NULL), 0);
    free(bytes);
    convcat_close(cat);
}

static void test_open_default_takes_the_environment_alone(void)
{
    setenv("CONVCAT_CATALOG", catalog_path, 1);
    char path[4096];
    UNIT_ASSERT_STATUS(convcat_default_catalog_path(path, sizeof path), CONVCAT_OK);
    CU_ASSERT_STRING_EQUAL(path, catalog_path);
    convcat_catalog *cat = NULL;
    UNIT_ASSERT_STATUS(convcat_open_default(&cat), CONVCAT_OK);
    CU_ASSERT_PTR_NOT_NULL(cat);
    convcat_close(cat);
    /* A path too long for the caller's buffer is refused, not cut. */
    UNIT_ASSERT_STATUS(convcat_default_catalog_path(path, 4), CONVCAT_ERR_INVALID_ARGUMENT);
    /* Set but missing: an error that names it, and no other place is tried. */
    setenv("CONVCAT_CATALOG", "/nonexistent/convcat.catalog", 1);
    UNIT_ASSERT_STATUS(convcat_open_default(&cat), CONVCAT_ERR_IO);
    CU_ASSERT_PTR_NULL(cat);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "/nonexistent/convcat.catalog");
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "unset CONVCAT_CATALOG");
    /* A directory is not a catalog. */
    setenv("CONVCAT_CATALOG", "/", 1);
    UNIT_ASSERT_STATUS(convcat_default_catalog_path(path, sizeof path), CONVCAT_ERR_IO);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "not a regular file");
    unsetenv("CONVCAT_CATALOG");
}

static void test_open_default_names_every_place_it_tried(void)
{
    unsetenv("CONVCAT_CATALOG");
    char path[4096];
    const convcat_status st = convcat_default_catalog_path(path, sizeof path);
    if (st == CONVCAT_OK) {   /* a convcat installed on this machine: then it is a file */
        printf("\n    (an installed catalog was found: %s)", path);
        CU_ASSERT_EQUAL(access(path, R_OK), 0);
        return;
    }
    UNIT_ASSERT_STATUS(st, CONVCAT_ERR_IO);
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "$CONVCAT_CATALOG (not set)");
    UNIT_ASSERT_MENTIONS(convcat_last_error(), "share/convcat/convcat.catalog");
    UNIT_ASSERT_STATUS(convcat_open_default(NULL), CONVCAT_ERR_INVALID_ARGUMENT);
    UNIT_ASSERT_STATUS(convcat_default_catalog_path(NULL, 10), CONVCAT_ERR_INVALID_ARGUMENT);
}

/* ---- the log --------------------------------------------------------------- */

static char logged[8][1024];
static int lines;

static void collect(void *user, const char *line)
{
    CU_ASSERT_PTR_EQUAL(user, &lines);
    if (lines < 8)
        snprintf(logged[lines], sizeof logged[lines], "%s", line);
    ++lines;
}

/* Run f with stderr sent to a file; what it printed there. */
static void capture_stderr(void (*f)(void), char *out, size_t n)
{
    char name[] = "/tmp/convcat-test-log-XXXXXX";
    const int fd = mkstemp(name);
    CU_ASSERT_TRUE_FATAL(fd >= 0);
    fflush(stderr);
    const int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    f();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    const ssize_t got = pread(fd, out, n - 1, 0);
    out[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(name);
}

static void log_twice(void)
{
    cvc_log("one %d", 1);
    cvc_log("two %s", "2");
}

static void test_log_is_silent_unless_asked(void)
{
    unsetenv("CONVCAT_LOG");
    convcat_set_log_callback(NULL, NULL);
    CU_ASSERT_FALSE(cvc_log_enabled());
    char err[256];
    capture_stderr(log_twice, err, sizeof err);
    CU_ASSERT_STRING_EQUAL(err, "");
    setenv("CONVCAT_LOG", "0", 1);
    CU_ASSERT_FALSE(cvc_log_enabled());
    capture_stderr(log_twice, err, sizeof err);
    CU_ASSERT_STRING_EQUAL(err, "");
    /* CONVCAT_LOG=1: to stderr, a line each. */
    setenv("CONVCAT_LOG", "1", 1);
    CU_ASSERT_TRUE(cvc_log_enabled());
    capture_stderr(log_twice, err, sizeof err);
    CU_ASSERT_STRING_EQUAL(err, "convcat: one 1\nconvcat: two 2\n");
    unsetenv("CONVCAT_LOG");
}

static void test_log_reaches_the_callback(void)
{
    lines = 0;
    setenv("CONVCAT_LOG", "1", 1);   /* a callback takes precedence over stderr */
    convcat_set_log_callback(collect, &lines);
    char err[256];
    capture_stderr(log_twice, err, sizeof err);
    CU_ASSERT_STRING_EQUAL(err, "");
    CU_ASSERT_EQUAL(lines, 2);
    CU_ASSERT_STRING_EQUAL(logged[0], "one 1");
    unsetenv("CONVCAT_LOG");
    /* The library's own lines: the catalog convcat_open_default found. */
    lines = 0;
    setenv("CONVCAT_CATALOG", catalog_path, 1);
    convcat_catalog *cat;
    UNIT_ASSERT_STATUS(convcat_open_default(&cat), CONVCAT_OK);
    CU_ASSERT_EQUAL(lines, 1);
    UNIT_ASSERT_MENTIONS(logged[0], "catalog: opened");
    UNIT_ASSERT_MENTIONS(logged[0], catalog_path);
    convcat_close(cat);
    unsetenv("CONVCAT_CATALOG");
    convcat_set_log_callback(NULL, &lines);
    lines = 0;
    cvc_log("gone");
    CU_ASSERT_EQUAL(lines, 0);
}

static void test_problem_phrase(void)
{
    convcat_problem p;
    convcat_problem_init(&p);
    p.n = 2, p.h = 56, p.w = 56, p.c = 64, p.k = 128, p.r = p.s = 3;
    p.pad_lo[1] = p.pad_hi[1] = p.pad_lo[2] = p.pad_hi[2] = 1;
    char text[256];
    cvc_problem_phrase(&p, text, sizeof text);
    CU_ASSERT_STRING_EQUAL(text, "fprop 2D bf16 x bf16 -> bf16, N 2 H 56 W 56 C 64 -> K 128, filter 3x3, pad 1/1 1/1, "
                                 "stride 1 1, dilation 1 1");
    char small[16];   /* cut, never overrun */
    cvc_problem_phrase(&p, small, sizeof small);
    CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"versions agree", test_versions_agree},
        {"catalog id is the index CRC", test_catalog_id_is_the_index_crc},
        {"open_default takes the environment alone", test_open_default_takes_the_environment_alone},
        {"open_default names every place it tried", test_open_default_names_every_place_it_tried},
        {"log is silent unless asked", test_log_is_silent_unless_asked},
        {"log reaches the callback", test_log_reaches_the_callback},
        {"problem phrase", test_problem_phrase},
        CU_TEST_INFO_NULL,
    };
    return unit_main("packaging", tests, setup, NULL);
}
