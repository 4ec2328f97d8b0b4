/* kernels/check_rule.h: the tolerance every implementation of a case is held to against its float64
 * reference — benchdb's kernels (the workloads) and the peers that report their own check
 * (schemas/peer-protocol.md, "Validation"), from one table, so that "validated" means the same
 * thing for both.
 *
 * An element passes when |x − ref| <= atol · scale + rtol · |ref|, where scale is, by suite:
 * attention, max |ref| over the compared tensor's (batch, head) slice (attention_check.h); e2e,
 * max |ref| over the compared tensor (the loss: |ref|); matmul, Σ_k |a_ik · b_kj| of the entry
 * (matmul_common.h). */
#ifndef BENCHDB_CHECK_RULE_H
#define BENCHDB_CHECK_RULE_H

#include "params.h"

struct check_rule {
	double atol, rtol;
};

/* The rule for case p (its suite, dtype and tf32); {0, 0} for a suite without one. */
struct check_rule check_rule_for(const struct case_params *p);

#endif
