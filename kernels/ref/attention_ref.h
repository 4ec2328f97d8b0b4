/* kernels/ref/attention_ref.h: float64 reference attention, forward and backward.
 *
 * The definition every kernel is checked against, written as plain loops in double:
 *   S = scale · Q K^T (scale = 1/sqrt(head_dim)), causal: S[i][j] = -inf for j > i,
 *   P = softmax_rows(S), O = P V, LSE[i] = log Σ_j exp(S[i][j]);
 *   backward of L with dO = ∂L/∂O: dV = P^T dO, dP = dO V^T, Δ_i = Σ_d dO[i][d] O[i][d],
 *   dS = P ⊙ (dP − Δ), dQ = scale · dS K, dK = scale · dS^T Q.
 */
#ifndef BENCHDB_ATTENTION_REF_H
#define BENCHDB_ATTENTION_REF_H

#include <stdint.h>

/* The shape of one attention problem. Q, K, V, O and their gradients are contiguous
 * (batch, heads, seq_len, head_dim); LSE is (batch, heads, seq_len). */
struct attention_dims {
	int64_t batch, heads, seq_len, head_dim;
	int causal;            /* query i attends to keys j <= i */
};

/*
 * Forward of one head for nrows query rows. q: (nrows, head_dim), the query rows, which sit at
 * positions rows[0..nrows) of the sequence (positions 0..nrows-1 when rows is NULL; causal
 * masking uses the position); k, v: (seq_len, head_dim); o: (nrows, head_dim); lse: (nrows),
 * natural log. Both outputs are optional (NULL). Returns 0, or BD_ENOMEM when its row buffer
 * cannot be allocated.
 */
int attention_ref_forward_head(int64_t seq_len, int64_t head_dim, int causal, const double *q,
			       const double *k, const double *v, const int64_t *rows,
			       int64_t nrows, double *o, double *lse);
/* Backward of one head: q, k, v, d_o (seq_len, head_dim) in; dq, dk, dv (seq_len, head_dim)
 * overwritten. Recomputes the forward itself. Returns 0 or BD_ENOMEM. */
int attention_ref_backward_head(int64_t seq_len, int64_t head_dim, int causal, const double *q,
				const double *k, const double *v, const double *d_o, double *dq,
				double *dk, double *dv);

/* The same over every (batch, head) of contiguous tensors of shape d. */
int attention_ref_forward(const struct attention_dims *d, const double *q, const double *k,
			  const double *v, double *o, double *lse);
int attention_ref_backward(const struct attention_dims *d, const double *q, const double *k,
			   const double *v, const double *d_o, double *dq, double *dk, double *dv);

/* Multiply-adds of the reference for d: forward, and forward plus backward. Validation uses
 * these to decide between a full comparison and a sampled one. */
double attention_ref_forward_cost(const struct attention_dims *d);
double attention_ref_backward_cost(const struct attention_dims *d);

#endif
