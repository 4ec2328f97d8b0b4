/* kernels/model/model.h: the pre-norm decoder-only LM of docs/design.md ("The e2e model"), written once over the
 * device-ops interface (ops.h), and its float64 reference (model_ref.c).
 *
 *   tokens (b, t) -> embedding -> L × [x += Wo·attn(rope(Wq·n1(x)), rope(Wk·n1(x)), Wv·n1(x));
 *                                      x += W2·(silu(W1·n2(x)) ⊙ W3·n2(x))]
 *   -> n_f(x) -> logits = Wlm·n_f(x) -> mean cross-entropy against targets (b, t)
 *
 * n1, n2, n_f are RMSNorms (eps 1e-5, float32) with gains; RoPE (theta 10000) rotates interleaved
 * pairs of each head of Q and K; attention is causal with scale 1/sqrt(head_dim).
 *
 * Parameters are one flat float32 buffer in this order (the float64 reference uses the same):
 *   embedding (V, d)
 *   per layer: attn_norm (d), w_qkv (3d, d) = [Wq; Wk; Wv], w_o (d, d), ffn_norm (d),
 *              w_13 (2f, d) = [W1; W3], w_2 (d, f)
 *   final_norm (d), lm_head (V, d)
 * which holds L·(4d² + 3·d·f + 2d) + 2·V·d + d floats.
 *
 * Mixed precision (dtype bfloat16): GEMMs read bfloat16 activations and a bfloat16 shadow of the
 * weights (refreshed by the AdamW step, which updates the float32 master copy) and accumulate in
 * float32; the residual stream, norms, softmax statistics, gradients and optimizer state are
 * float32. Attention's tensors are float32 in the model; the CPU computes it in float32, CUDA in
 * bfloat16 (its backend converts Q, K, V in and O out, with float32 softmax and accumulation, as
 * autocast does), whichever implementation (naive, flash, sdpa) the case selects.
 */
#ifndef BENCHDB_MODEL_H
#define BENCHDB_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "ops.h"
#include "params.h"

#define MODEL_NORM_EPS 1e-5f
#define MODEL_ROPE_THETA 10000.0
#define MODEL_INIT_STD 0.02

/* The AdamW settings of every train step (also in peers/pytorch_e2e.py). */
extern const struct adamw_params model_adamw;

/* How much of the model a case runs: what it allocates follows from it. */
enum model_mode {
	MODEL_INFER,     /* forward only: no gradients, activations reused layer to layer */
	MODEL_GRAD,      /* forward + backward: gradients and every layer's activations */
	MODEL_TRAIN,     /* + AdamW state */
};

struct model_shape {
	struct model_config cfg;
	int64_t batch, ctx;
	enum bd_dtype dtype;      /* DTYPE_FLOAT32 or DTYPE_BFLOAT16 */
	char attention[16];       /* "naive", "flash", "sdpa" */
	enum model_mode mode;
};

/* Bytes by what they hold, from the model's own allocations. */
struct model_memory {
	int64_t params;           /* float32 master weights (+ the bfloat16 shadow) */
	int64_t grads;
	int64_t optim;            /* AdamW m and v */
	int64_t activations;      /* everything the forward keeps (or reuses) and the backward needs */
	int64_t workspace;        /* shared scratch: the QKV buffer, backward gradients, tokens, RoPE */
};

struct model;

/* The offsets of the layout, in floats. */
struct model_layout {
	int64_t embedding, layer0, layer_stride;          /* layer l starts at layer0 + l·stride */
	int64_t attn_norm, w_qkv, w_o, ffn_norm, w_13, w_2; /* within a layer */
	int64_t final_norm, lm_head, total;
};
void model_layout(const struct model_config *c, struct model_layout *lay);
/* The parameter tensors in layout order: name ("embedding", "layer3.w_q", ...), offset and
 * length in floats. Fills at most max entries; returns how many there are (9·L + 3). The fused
 * w_qkv and w_13 are listed as the projections they hold (w_q, w_k, w_v; w_1, w_3), so that a
 * comparison per tensor holds each to its own scale: at initialisation the gradients of Wq and
 * Wk are a few percent of Wv's, and an error in them would hide under Wv's scale. */
struct model_tensor {
	char name[48];
	int64_t offset, count;
};
int model_tensors(const struct model_config *c, struct model_tensor *out, int max);
/* The validation's comparison of gradients g with a reference: the largest over the tensors of
 * max |g − ref| / max |ref| (max |g − ref| where ref is all zero); worst (size bytes, may be
 * NULL) names the tensor where it is largest. A gradient that is NaN or infinite counts as an
 * infinite error, so that it fails every bound (fmax would pass over a NaN). */
double model_grad_error(const struct model_config *c, const float *g, const double *ref,
			char *worst, size_t size);
/* The largest |p1 − formula| over count parameters after the first AdamW step (model_adamw, from
 * m = v = 0) from p0 with gradients g, in float64; infinite where p1 is NaN or infinite. */
double model_adamw_first_step_error(const float *p0, const float *g, const float *p1,
				    int64_t count);
/* The same for the second step, from p1 (after the first) to p2 with g1 and g2 the gradients of
 * the two steps: m and v carried over from the first, the bias corrections of step 2. A step
 * count that does not advance, or a bias correction right only at step 1, fails it. */
double model_adamw_second_step_error(const float *p1, const float *g1, const float *g2,
				     const float *p2, int64_t count);
/* Initial parameters (float32 host array of model_param_count): norms 1, every matrix uniform
 * with standard deviation MODEL_INIT_STD, from seed. */
void model_init_params(const struct model_config *c, uint64_t seed, float *params);
/* Random tokens and targets in [0, V), (b·t) each, from seed. */
void model_init_tokens(const struct model_config *c, int64_t n, uint64_t seed, int32_t *tokens,
		       int32_t *targets);

/* Check that the shape can run on dev's kind of backend before anything is allocated. Returns 0,
 * or BD_EINVAL with a reason in err. */
int model_check(const struct model_shape *s, struct bd_error *err);
/* Allocate everything through dev (so the limit applies), upload the initial parameters and
 * tokens from seed. host_params (may be NULL) replaces the seeded parameters. Returns 0,
 * BD_ENOMEM (dev->mem says how much was needed) or another bd_rc, with dev->err. */
int model_create(struct model **out, struct dev *dev, const struct model_shape *s, uint64_t seed,
		 const float *host_params);
/* What model_create would allocate for s, by what it holds (the same sizes, counted without
 * allocating anything). The attention workspaces are the backend's: of them only the naive
 * attention's score matrices are counted (in activations, as model_create counts them), at the
 * least every backend holds; flash's and cuDNN's O(t) workspaces are not. Returns 0, or
 * model_check's BD_EINVAL, or BD_ENOMEM. */
int model_memory_estimate(const struct model_shape *s, struct model_memory *mm,
			  struct bd_error *err);
/* Accepts NULL. */
void model_free(struct model *m);

/* The three timed phases. forward computes the loss; backward the gradients of every parameter
 * (overwritten, not accumulated) from the last forward; step one AdamW update. None allocates. */
int model_forward(struct model *m);
int model_backward(struct model *m);
int model_step(struct model *m);

/* Host copies: the last forward's loss; the gradients or parameters (float32, param_count). */
int model_loss(struct model *m, double *loss);
int model_grads(struct model *m, float *host);
int model_params(struct model *m, float *host);
void model_memory(const struct model *m, struct model_memory *mm);

/* Model FLOPs per iteration: GEMMs and attention (causal, halved), forward and backward (2×
 * GEMMs, 2.5× attention). */
double model_flops_fwd(const struct model_config *c, int64_t batch, int64_t ctx);
double model_flops_bwd(const struct model_config *c, int64_t batch, int64_t ctx);

/* The float64 reference: mean loss and, when grads is not NULL, its gradient for every parameter
 * (param_count doubles). tokens and targets are (b·t). */
void model_ref_loss_grad(const struct model_config *c, int64_t b, int64_t t,
			 const int32_t *tokens, const int32_t *targets, const double *params,
			 double *loss, double *grads);

#endif
