/* test_key.c: the kernel key grammar of runtime/src/key.c, and the names it uses.
 *
 * The vectors come from tests/key_vectors.txt (under $CONVCAT_SOURCE_ROOT),
 * which tests/test_generator.py runs through the Python parser as well: the
 * two implementations must agree on every line.
 */
#include <stdbool.h>

#include "internal.h"
#include "unit.h"

typedef struct vector {
    bool valid;
    int line;
    char *text;
} vector;

static vector *vectors;
static size_t vector_count;
static uint8_t *vector_file;

/* Parse key_vectors.txt (format in its header) into `vectors`. */
static int load_vectors(void)
{
    const char *root = unit_env_path("CONVCAT_SOURCE_ROOT");
    if (!root)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/key_vectors.txt", root);
    size_t size;
    if (!(vector_file = unit_read_file(path, &size)))
        return -1;
    vectors = calloc(size / 2 + 1, sizeof *vectors);   /* at most one vector per two bytes */
    if (!vectors)
        return -1;
    char *line = (char *)vector_file;
    for (int no = 1; line && *line; ++no) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        if (*line && *line != '#') {
            char *text = strchr(line, ' ');
            if (!text) {
                fprintf(stderr, "%s:%d: no space after the first word\n", path, no);
                return -1;
            }
            *text++ = '\0';
            const size_t n = strlen(text);
            if (n >= 2 && text[0] == '"' && text[n - 1] == '"') {
                text[n - 1] = '\0';
                ++text;
            }
            if (strcmp(line, "valid") != 0 && strcmp(line, "invalid") != 0) {
                fprintf(stderr, "%s:%d: '%s' is neither 'valid' nor 'invalid'\n", path, no, line);
                return -1;
            }
            vectors[vector_count++] = (vector){.valid = line[0] == 'v', .line = no, .text = text};
        }
        line = next;
    }
    return 0;
}

static int free_vectors(void)
{
    free(vectors);
    free(vector_file);
    return 0;
}

static void test_vector_file_has_both_kinds(void)
{
    size_t valid = 0;
    for (size_t i = 0; i < vector_count; ++i)
        valid += vectors[i].valid;
    CU_ASSERT_TRUE(vector_count >= 30);
    CU_ASSERT_TRUE(valid >= 5);
    CU_ASSERT_TRUE(vector_count - valid >= 25);
}

static void test_valid_keys_parse_and_print_back_identically(void)
{
    for (size_t i = 0; i < vector_count; ++i) {
        const vector *v = &vectors[i];
        if (!v->valid)
            continue;
        cvc_key k;
        char why[192] = "", back[CVC_KEY_BYTES] = "";
        const bool ok = cvc_key_parse(v->text, &k, why, sizeof why);
        if (!ok)
            printf("\n    key_vectors.txt:%d: '%s' refused: %s", v->line, v->text, why);
        CU_ASSERT_TRUE(ok);
        if (!ok)
            continue;
        const int len = cvc_key_print(&k, back, sizeof back);
        if (strcmp(back, v->text) != 0)
            printf("\n    key_vectors.txt:%d: '%s' prints back as '%s'", v->line, v->text, back);
        CU_ASSERT_STRING_EQUAL(back, v->text);
        CU_ASSERT_EQUAL(len, (int)strlen(v->text));
    }
}

static void test_invalid_strings_are_refused_with_a_reason(void)
{
    for (size_t i = 0; i < vector_count; ++i) {
        const vector *v = &vectors[i];
        if (v->valid)
            continue;
        cvc_key k;
        char why[192] = "";
        const bool ok = cvc_key_parse(v->text, &k, why, sizeof why);
        if (ok)
            printf("\n    key_vectors.txt:%d: '%s' was accepted", v->line, v->text);
        CU_ASSERT_FALSE(ok);
        CU_ASSERT_TRUE(why[0] != '\0');
    }
}

static void test_parse_gives_every_field(void)
{
    cvc_key k;
    char why[192];
    CU_ASSERT_TRUE_FATAL(cvc_key_parse("sm90a_fprop_2d_bf16_f16_f32_e4m3_128x256x64_s4_c2x1_coop", &k, why,
                                       sizeof why));
    CU_ASSERT_EQUAL(k.arch, CONVCAT_ARCH_SM90A);
    CU_ASSERT_EQUAL(k.op, CONVCAT_FPROP);
    CU_ASSERT_EQUAL(k.dims, 2);
    CU_ASSERT_EQUAL(k.a, CONVCAT_BF16);
    CU_ASSERT_EQUAL(k.b, CONVCAT_F16);
    CU_ASSERT_EQUAL(k.acc, CONVCAT_F32);
    CU_ASSERT_EQUAL(k.out, CONVCAT_E4M3);
    CU_ASSERT_EQUAL(k.tile_m, 128);
    CU_ASSERT_EQUAL(k.tile_n, 256);
    CU_ASSERT_EQUAL(k.tile_k, 64);
    CU_ASSERT_EQUAL(k.stages, 4);
    CU_ASSERT_EQUAL(k.cluster_m, 2);
    CU_ASSERT_EQUAL(k.cluster_n, 1);
    CU_ASSERT_EQUAL(k.schedule, CONVCAT_COOP);
    CU_ASSERT_TRUE_FATAL(cvc_key_parse("sm100a_wgrad_3d_e5m2_tf32_f16_f32_9999x1x10_s99_c1x9_pingpong", &k, why,
                                       sizeof why));
    CU_ASSERT_EQUAL(k.arch, CONVCAT_ARCH_SM100A);
    CU_ASSERT_EQUAL(k.op, CONVCAT_WGRAD);
    CU_ASSERT_EQUAL(k.dims, 3);
    CU_ASSERT_EQUAL(k.a, CONVCAT_E5M2);
    CU_ASSERT_EQUAL(k.b, CONVCAT_TF32);
    CU_ASSERT_EQUAL(k.acc, CONVCAT_F16);
    CU_ASSERT_EQUAL(k.out, CONVCAT_F32);
    CU_ASSERT_EQUAL(k.tile_m, 9999);
    CU_ASSERT_EQUAL(k.tile_n, 1);
    CU_ASSERT_EQUAL(k.tile_k, 10);
    CU_ASSERT_EQUAL(k.stages, 99);
    CU_ASSERT_EQUAL(k.cluster_m, 1);
    CU_ASSERT_EQUAL(k.cluster_n, 9);
    CU_ASSERT_EQUAL(k.schedule, CONVCAT_PINGPONG);
    CU_ASSERT_TRUE_FATAL(cvc_key_parse("sm90a_dgrad_2d_bf16_bf16_f32_bf16_4x16x64_s1_c1x1_direct", &k, why, sizeof why));
    CU_ASSERT_EQUAL(k.op, CONVCAT_DGRAD);
    CU_ASSERT_TRUE(k.tile_m == 4 && k.tile_n == 16 && k.tile_k == 64 && k.stages == 1);
    CU_ASSERT_EQUAL(k.schedule, CONVCAT_DIRECT);
    CU_ASSERT_FALSE(cvc_key_dynamic(&k));
    CU_ASSERT_TRUE_FATAL(cvc_key_parse("sm100a_wgrad_3d_tf32_tf32_f32_f32_64x32x16_s3_c1x1_gather", &k, why, sizeof why));
    CU_ASSERT_EQUAL(k.arch, CONVCAT_ARCH_SM100A);
    CU_ASSERT_EQUAL(k.a, CONVCAT_TF32);
    CU_ASSERT_EQUAL(k.schedule, CONVCAT_GATHER);
}

/* Every value of every enumerated field prints and parses back to itself. */
static void test_every_enumerated_value_round_trips(void)
{
    int checked = 0;
    for (int arch = CONVCAT_ARCH_SM90A; arch <= CONVCAT_ARCH_SM100A; ++arch)
        for (int op = CONVCAT_FPROP; op <= CONVCAT_WGRAD; ++op)
            for (int dims = 1; dims <= 3; ++dims)
                for (int t = CONVCAT_F16; t <= CONVCAT_E5M2; ++t)
                    for (int sched = CONVCAT_COOP; sched <= CONVCAT_DIRECT; ++sched)
                        for (int pos = 0; pos < 4; ++pos) {
                            cvc_key k = {.arch = arch, .op = op, .dims = dims, .a = CONVCAT_BF16,
                                         .b = CONVCAT_BF16, .acc = CONVCAT_F32, .out = CONVCAT_BF16,
                                         .tile_m = 64, .tile_n = 192, .tile_k = 32, .stages = 7,
                                         .cluster_m = 1, .cluster_n = 2, .schedule = sched};
                            convcat_dtype *slot[4] = {&k.a, &k.b, &k.acc, &k.out};
                            *slot[pos] = (convcat_dtype)t;
                            char text[CVC_KEY_BYTES], why[192] = "";
                            cvc_key back;
                            CU_ASSERT_TRUE(cvc_key_print(&k, text, sizeof text) < (int)sizeof text);
                            const bool ok = cvc_key_parse(text, &back, why, sizeof why);
                            CU_ASSERT_TRUE(ok);
                            CU_ASSERT_TRUE(ok && memcmp(&back, &k, sizeof k) == 0);
                            ++checked;
                        }
    CU_ASSERT_EQUAL(checked, 2 * 3 * 3 * 6 * 8 * 4);
}

static void test_parse_refuses_null_and_overlong_text(void)
{
    cvc_key k;
    char why[192] = "";
    CU_ASSERT_FALSE(cvc_key_parse(NULL, &k, why, sizeof why));
    CU_ASSERT_TRUE(why[0] != '\0');
    /* 111 characters is the longest the catalog's key field holds: refused only for its length here. */
    char text[256];
    memset(text, 'a', sizeof text);
    text[CVC_KEY_BYTES] = '\0';
    why[0] = '\0';
    CU_ASSERT_FALSE(cvc_key_parse(text, &k, why, sizeof why));
    UNIT_ASSERT_MENTIONS(why, "longer than 111");
    text[CVC_KEY_BYTES - 1] = '\0';
    why[0] = '\0';
    CU_ASSERT_FALSE(cvc_key_parse(text, &k, why, sizeof why));
    CU_ASSERT_TRUE(why[0] != '\0' && strstr(why, "longer than") == NULL);
}

/* The reason is optional and truncated to the caller's buffer. */
static void test_reason_buffer_is_optional_and_bounded(void)
{
    cvc_key k;
    const char *bad = "sm90a_fprop_4d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop";
    CU_ASSERT_FALSE(cvc_key_parse(bad, &k, NULL, 0));
    char why[8];
    memset(why, 'x', sizeof why);
    CU_ASSERT_FALSE(cvc_key_parse(bad, &k, why, 0));
    CU_ASSERT_EQUAL(why[0], 'x');
    CU_ASSERT_FALSE(cvc_key_parse(bad, &k, why, sizeof why));
    CU_ASSERT_EQUAL(strlen(why), sizeof why - 1);
    char full[192];
    CU_ASSERT_FALSE(cvc_key_parse(bad, &k, full, sizeof full));
    UNIT_ASSERT_MENTIONS(full, "dims '4d'");
}

/* Each field's reason names the field. */
static void test_reasons_name_the_bad_field(void)
{
    static const struct {
        const char *text, *mention;
    } cases[] = {
        {"sm80_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop", "arch 'sm80'"},
        {"sm90a_xprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop", "op 'xprop'"},
        {"sm90a_fprop_0d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop", "dims '0d'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_f64_128x256x64_s4_c2x1_coop", "data type 'f64'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x0256x64_s4_c2x1_coop", "tile '128x0256x64'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s0_c2x1_coop", "stages 's0'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c10x1_coop", "cluster 'c10x1'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_ping", "schedule 'ping'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x64x32_s3_c1x1_gathered", "schedule 'gathered'"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1", "10 fields"},
        {"sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop_", "not a key"},
    };
    for (size_t i = 0; i < CVC_ARRAY_LEN(cases); ++i) {
        cvc_key k;
        char why[192] = "";
        CU_ASSERT_FALSE(cvc_key_parse(cases[i].text, &k, why, sizeof why));
        UNIT_ASSERT_MENTIONS(why, cases[i].mention);
    }
}

static void test_print_has_snprintf_semantics(void)
{
    cvc_key k;
    const char *text = "sm90a_fprop_2d_bf16_bf16_f32_bf16_128x256x64_s4_c2x1_coop";
    CU_ASSERT_TRUE_FATAL(cvc_key_parse(text, &k, NULL, 0));
    char small[10];
    CU_ASSERT_EQUAL(cvc_key_print(&k, small, sizeof small), (int)strlen(text));
    CU_ASSERT_STRING_EQUAL(small, "sm90a_fpr");
    CU_ASSERT_EQUAL(cvc_key_print(&k, NULL, 0), (int)strlen(text));
}

/* The names keys are made of, and the status strings. */
static void test_names_cover_exactly_the_enums(void)
{
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_F16), "f16");
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_BF16), "bf16");
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_TF32), "tf32");
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_F32), "f32");
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_E4M3), "e4m3");
    CU_ASSERT_STRING_EQUAL(convcat_dtype_name(CONVCAT_E5M2), "e5m2");
    CU_ASSERT_PTR_NULL(convcat_dtype_name((convcat_dtype)0));
    CU_ASSERT_PTR_NULL(convcat_dtype_name((convcat_dtype)7));
    CU_ASSERT_PTR_NULL(convcat_dtype_name((convcat_dtype)-1));
    CU_ASSERT_STRING_EQUAL(convcat_op_name(CONVCAT_FPROP), "fprop");
    CU_ASSERT_STRING_EQUAL(convcat_op_name(CONVCAT_DGRAD), "dgrad");
    CU_ASSERT_STRING_EQUAL(convcat_op_name(CONVCAT_WGRAD), "wgrad");
    CU_ASSERT_PTR_NULL(convcat_op_name((convcat_op)3));
    CU_ASSERT_PTR_NULL(convcat_op_name((convcat_op)-1));
    CU_ASSERT_STRING_EQUAL(convcat_arch_name(CONVCAT_ARCH_SM90A), "sm90a");
    CU_ASSERT_STRING_EQUAL(convcat_arch_name(CONVCAT_ARCH_SM100A), "sm100a");
    CU_ASSERT_PTR_NULL(convcat_arch_name((convcat_arch)3));
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_COOP), "coop");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_PINGPONG), "pingpong");
    CU_ASSERT_PTR_NULL(convcat_schedule_name((convcat_schedule)0));
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_1SM), "1sm");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_2SM), "2sm");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_SWAP), "swap");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_HALO), "halo");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_GATHER), "gather");
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_DIRECT), "direct");
    CU_ASSERT_EQUAL(CONVCAT_GATHER, 7);
    CU_ASSERT_STRING_EQUAL(convcat_schedule_name(CONVCAT_GROUPED), "grouped");
    CU_ASSERT_EQUAL(CONVCAT_DIRECT, 8);
    CU_ASSERT_EQUAL(CONVCAT_GROUPED, 9);
    CU_ASSERT_PTR_NULL(convcat_schedule_name((convcat_schedule)10));
    CU_ASSERT_PTR_NULL(convcat_schedule_name((convcat_schedule)-1));
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_F16), 2);
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_BF16), 2);
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_TF32), 4);
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_F32), 4);
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_E4M3), 1);
    CU_ASSERT_EQUAL(cvc_dtype_bytes(CONVCAT_E5M2), 1);
    CU_ASSERT_EQUAL(cvc_dtype_bytes((convcat_dtype)0), 0);
}

static void test_every_status_has_its_own_string(void)
{
    const char *seen[12];
    for (int s = 0; s >= -11; --s) {
        const char *str = convcat_status_string((convcat_status)s);
        CU_ASSERT_TRUE(str && *str && strcmp(str, "unknown status") != 0);
        for (int j = 0; j < -s; ++j)
            CU_ASSERT_TRUE(strcmp(seen[j], str) != 0);
        seen[-s] = str;
    }
    CU_ASSERT_STRING_EQUAL(convcat_status_string((convcat_status)-12), "unknown status");
    CU_ASSERT_STRING_EQUAL(convcat_status_string((convcat_status)1), "unknown status");
}

int main(void)
{
    CU_TestInfo tests[] = {
        {"vector file has both kinds", test_vector_file_has_both_kinds},
        {"valid keys parse and print back identically", test_valid_keys_parse_and_print_back_identically},
        {"invalid strings are refused with a reason", test_invalid_strings_are_refused_with_a_reason},
        {"parse gives every field", test_parse_gives_every_field},
        {"every enumerated value round-trips", test_every_enumerated_value_round_trips},
        {"parse refuses NULL and overlong text", test_parse_refuses_null_and_overlong_text},
        {"reason buffer is optional and bounded", test_reason_buffer_is_optional_and_bounded},
        {"reasons name the bad field", test_reasons_name_the_bad_field},
        {"print has snprintf semantics", test_print_has_snprintf_semantics},
        {"names cover exactly the enums", test_names_cover_exactly_the_enums},
        {"every status has its own string", test_every_status_has_its_own_string},
        CU_TEST_INFO_NULL,
    };
    if (load_vectors() != 0) {
        free_vectors();
        return UNIT_SETUP_FAILED;
    }
    return unit_main("key", tests, NULL, free_vectors);
}
