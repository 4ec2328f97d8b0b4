/* kernels/ref/check_rule.c: the tolerances of check_rule.h. */
#include "check_rule.h"

#include "attention_check.h"

/* e2e, the tiny-model check (workloads/e2e.c), per gradient tensor (Wq, Wk, Wv,
 * W1 and W3 each) and the loss. Measured (tests/test_model.c): float32 6e-7, bfloat16 9.5e-3 (up
 * to 1.7e-2 over odd shapes); bfloat16 rounds every GEMM input to 8 bits of
 * mantissa (2^-9 relative), which a 2-layer model compounds. float32 with TF32 GEMMs (CUDA): inputs
 * rounded to 10 bits of mantissa (2^-11 relative), 8x finer than bfloat16; not yet measured on a
 * GPU, so a quarter of bfloat16's bound. float16 (peers only: torch.autocast(float16); benchdb's
 * model runs float32 and bfloat16): PyTorch's autocast of peers/pytorch_e2e.py's model (d_model 64,
 * 2 layers, batch 4, context 32) on the CPU, worst gradient tensor 4.7e-3 of its largest value
 * (bfloat16 1.1e-2), so half of bfloat16's bound: the same margin. */
#define E2E_TOL_FLOAT32 1e-4
#define E2E_TOL_BFLOAT16 4e-2
#define E2E_TOL_FLOAT16 2e-2
#define E2E_TOL_TF32 1e-2
/* matmul, per entry: TF32 rounds each input to 10 mantissa bits first, 2^-11 relative per
 * factor. */
#define MATMUL_TOL 1e-5
#define MATMUL_TOL_TF32 2e-3

struct check_rule check_rule_for(const struct case_params *p)
{
	switch (p->suite) {
	case SUITE_ATTENTION: {
		struct attention_tol t = attention_tol_for(p->dtype);
		return (struct check_rule){t.abs, t.rel};
	}
	case SUITE_E2E:
		return (struct check_rule){p->dtype == DTYPE_BFLOAT16 ? E2E_TOL_BFLOAT16
					   : p->dtype == DTYPE_FLOAT16 ? E2E_TOL_FLOAT16
					   : p->tf32 ? E2E_TOL_TF32 : E2E_TOL_FLOAT32, 0};
	case SUITE_MATMUL:
		return (struct check_rule){p->tf32 && p->dtype == DTYPE_FLOAT32 ? MATMUL_TOL_TF32
					   : MATMUL_TOL, 0};
	default:
		return (struct check_rule){0, 0};
	}
}
