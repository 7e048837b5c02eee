/* struct_layout.c: print sizeof/offsetof of convcat.h's structs, to check
 * bench.py's ctypes mirrors (bench.py --selftest compares with the numbers
 * recorded in STRUCT_LAYOUT there).
 *   gcc -I runtime/include bench/struct_layout.c -o /tmp/sl && /tmp/sl */
#include <stddef.h>
#include <stdio.h>
#include "convcat.h"

#define F(T, f) printf(" %s=%zu", #f, offsetof(T, f))
int main(void)
{
    printf("convcat_problem %zu", sizeof(convcat_problem));
    F(convcat_problem, dims); F(convcat_problem, n); F(convcat_problem, k); F(convcat_problem, pad_lo);
    F(convcat_problem, pad_hi); F(convcat_problem, stride); F(convcat_problem, dilation);
    F(convcat_problem, groups); F(convcat_problem, mode); F(convcat_problem, out_type);
    printf("\nconvcat_candidate %zu", sizeof(convcat_candidate));
    F(convcat_candidate, ok); F(convcat_candidate, predicted_us); F(convcat_candidate, reason);
    printf("\nconvcat_plan_info %zu", sizeof(convcat_plan_info));
    F(convcat_plan_info, grid); F(convcat_plan_info, smem_bytes); F(convcat_plan_info, workspace_bytes);
    printf("\nconvcat_tensors %zu", sizeof(convcat_tensors));
    F(convcat_tensors, c); F(convcat_tensors, alpha); F(convcat_tensors, beta); F(convcat_tensors, bias);
    F(convcat_tensors, activation); F(convcat_tensors, workspace);
    F(convcat_tensors, workspace_bytes);
    printf("\nconvcat_entry_info %zu", sizeof(convcat_entry_info));
    F(convcat_entry_info, arch); F(convcat_entry_info, dims); F(convcat_entry_info, tile_m);
    F(convcat_entry_info, schedule); F(convcat_entry_info, registers); F(convcat_entry_info, code_bytes);
    F(convcat_entry_info, fallback_m); F(convcat_entry_info, family); F(convcat_entry_info, verified);
    F(convcat_entry_info, groups_mode);
    printf("\n");
    return 0;
}
