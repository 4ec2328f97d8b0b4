/* kernels/workloads/e2e.c: workload "e2e" / "benchdb": the transformer of model.h on a device
 * backend, timed per phase (fwd = forward + loss, bwd = every gradient, opt = one AdamW step).
 *
 * Validation, before anything is timed:
 *  1. a tiny model (VALIDATE_CFG) with the case's dtype, attention and backend runs forward,
 *     backward and one AdamW step; its loss and every gradient tensor (model_tensors: Wq, Wk,
 *     Wv, W1 and W3 each on its own scale) are compared with the float64 reference
 *     (model_ref.c), and the step with a float64 AdamW of its own gradients; then a second
 *     forward, backward and step, whose step is checked the same way (m and v carried over, the
 *     bias corrections of step 2);
 *  2. the case's model runs every phase of its pass once at full size (which also builds the
 *     GEMM plans, so that no timed iteration, warm-up included, pays for them): the loss must be
 *     finite and where it is at initialisation (init_loss_range).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_rule.h"
#include "dev_workload.h"
#include "impls.h"
#include "model.h"

/* Slack around the range of the loss at initialisation (init_loss_range). */
#define LOSS_INIT_SLACK 1.0

/* head_dim 16: the smallest the flash kernels and cuDNN's SDPA take */
static const struct model_config validate_cfg = {
	.name = "validate", .d_model = 64, .d_ff = 144, .num_layers = 2, .num_heads = 4,
	.vocab_size = 101};
#define VALIDATE_BATCH 2
/* past the attention's first tiles on every backend (the CPU flash's 64-key steps and 96-query
 * blocks, CUDA flash's 128-row blocks), a multiple of none: at 13 a kernel wrong only beyond
 * its first tile passed the validation and was timed */
#define VALIDATE_CTX 145

struct e2e_case {
	struct wl_case c;       /* first: the case as the shared hooks take it */
	struct model *model;
};

static enum model_mode mode_of(enum bd_pass pass)
{
	return pass == PASS_FORWARD ? MODEL_INFER : pass == PASS_TRAIN_STEP ? MODEL_TRAIN : MODEL_GRAD;
}

static void shape_of(const struct case_params *p, struct model_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->cfg = p->model;
	s->batch = p->batch_size;
	s->ctx = p->context_length;
	s->dtype = p->dtype;
	snprintf(s->attention, sizeof(s->attention), "%s", p->attention[0] ? p->attention : "naive");
	s->mode = mode_of(p->pass);
}

static int e2e_check(const struct case_params *p, struct wl_status *st)
{
	if (p->pass == PASS_BACKWARD)
		return wl_set(st, STATUS_UNSUPPORTED, "the e2e passes are forward, forward_backward and "
			      "train_step");
	int code = wl_check_device(p, st);
	if (code)
		return code;
	char names[128];
	if (!impl_runs_on("attention", p->attention, p->device))
		return wl_set(st, STATUS_UNSUPPORTED, "attention '%s' does not run on the %s (%s: %s)",
			      p->attention, device_name(p->device), device_name(p->device),
			      impl_list("attention", p->device, names, sizeof(names)));
	if ((code = wl_check_gemm(p, st)))
		return code;
	struct model_shape s;
	struct bd_error err = {0};
	shape_of(p, &s);
	if (model_check(&s, &err))
		return wl_set(st, STATUS_UNSUPPORTED, "%s", err.msg);
	return wl_set(st, STATUS_OK, "%s", "");
}

static void e2e_figures(const struct case_params *p, struct wl_figures *f)
{
	memset(f, 0, sizeof(*f));
	int64_t P = model_param_count(&p->model);
	double w = (double)P * (p->dtype == DTYPE_BFLOAT16 ? 2 : 4);
	/* the float32 master weights and, in bfloat16, their shadow: as model_create allocates
	 * them (the figure a case that stops before its setup stores) */
	f->param_bytes = P * (int64_t)(sizeof(float) + (p->dtype == DTYPE_BFLOAT16 ? 2 : 0));
	f->param_count = P;
	f->flops[PHASE_FWD] = model_flops_fwd(&p->model, p->batch_size, p->context_length);
	f->flops[PHASE_BWD] = model_flops_bwd(&p->model, p->batch_size, p->context_length);
	/* AdamW: about a dozen operations per parameter */
	f->flops[PHASE_OPT] = 12.0 * (double)P;
	/* minimum traffic: every weight read once in the GEMMs' dtype per pass (the backward's
	 * dX = dY·W; dW = dY^T·X reads no weight), the backward also writes every float32 gradient
	 * (overwritten, not accumulated); AdamW reads p, g, m, v and writes p, m, v (+ the shadow) */
	f->bytes[PHASE_FWD] = w;
	f->bytes[PHASE_BWD] = w + 4.0 * (double)P;
	f->bytes[PHASE_OPT] = (double)P * (7 * 4 + (p->dtype == DTYPE_BFLOAT16 ? 2 : 0));
}

/* The model's byte counts as the workload interface names them. */
static struct wl_memory memory_of(const struct model_memory *mm)
{
	return (struct wl_memory){.params = mm->params, .grads = mm->grads, .optim = mm->optim,
				  .activations = mm->activations, .workspace = mm->workspace};
}

static int e2e_estimate(const struct case_params *p, struct wl_memory *m, struct wl_status *st)
{
	struct model_shape s;
	struct model_memory mm;
	struct bd_error err = {0};
	shape_of(p, &s);
	int rc = model_memory_estimate(&s, &mm, &err);
	*m = memory_of(&mm);
	if (rc)
		return wl_set(st, rc == BD_EINVAL ? STATUS_UNSUPPORTED : STATUS_ERROR, "%s", err.msg);
	return wl_set(st, STATUS_OK, "%s", "");
}

static int e2e_setup(const struct case_params *p, struct mem_arena *mem, void **state,
		     struct wl_status *st)
{
	int rc = wl_case_open(sizeof(struct e2e_case), p, mem, state, st);
	if (rc)
		return rc;
	struct e2e_case *c = *state;
	struct model_shape s;
	shape_of(p, &s);
	rc = model_create(&c->model, &c->c.dev, &s, p->seed, NULL);
	if (rc)
		return wl_from_dev(st, &c->c.dev, rc, "model");
	return wl_set(st, STATUS_OK, "%s", "");
}

/* Step 1 of the validation (see the file comment); a separate device state on the same arena. */
static int validate_tiny(const struct wl_case *c, struct wl_status *st)
{
	const struct model_config *cfg = &validate_cfg;
	struct model_shape s = {.cfg = *cfg, .batch = VALIDATE_BATCH, .ctx = VALIDATE_CTX,
				.dtype = c->p.dtype, .mode = MODEL_TRAIN};
	snprintf(s.attention, sizeof(s.attention), "%s", c->p.attention);
	int64_t P = model_param_count(cfg), n = VALIDATE_BATCH * VALIDATE_CTX;
	float *p0 = malloc((size_t)P * sizeof(float)), *g = malloc((size_t)P * sizeof(float)),
	      *p1 = malloc((size_t)P * sizeof(float)), *g2 = malloc((size_t)P * sizeof(float)),
	      *p2 = malloc((size_t)P * sizeof(float));
	double *pd = malloc((size_t)P * sizeof(double)), *gref = malloc((size_t)P * sizeof(double));
	int32_t *tok = malloc((size_t)(2 * n) * sizeof(int32_t));
	struct dev dev = {0};
	struct model *m = NULL;
	int code = STATUS_OK, rc;
	double tol = check_rule_for(&c->p).atol;   /* max |g − g_ref| <= tol · max |g_ref| */
	st->tolerance = tol;
	if (!p0 || !g || !p1 || !g2 || !p2 || !pd || !gref || !tok) {
		code = wl_set(st, STATUS_ERROR, "out of host memory for validation");
		goto done;
	}
	model_init_params(cfg, c->p.seed, p0);
	/* gains away from 1, so that a backward that forgets a gain is caught */
	struct model_layout lay;
	model_layout(cfg, &lay);
	for (int64_t l = 0; l <= cfg->num_layers; l++) {
		int64_t w = lay.layer0 + l * lay.layer_stride;
		float *g1 = p0 + (l < cfg->num_layers ? w + lay.attn_norm : lay.final_norm);
		float *g2 = p0 + w + lay.ffn_norm;
		for (int64_t i = 0; i < cfg->d_model; i++) {
			g1[i] = 1.0f + 0.5f * sinf((float)(3 * i + l));
			if (l < cfg->num_layers)
				g2[i] = 1.0f + 0.5f * cosf((float)(5 * i + l));
		}
	}
	for (int64_t i = 0; i < P; i++)
		pd[i] = p0[i];
	model_init_tokens(cfg, n, c->p.seed, tok, tok + n);
	if ((rc = dev_open(&dev, c->p.device, c->mem, &dev.err))) {
		code = wl_from_error(st, rc, NULL, &dev.err);
		goto done;
	}
	dev.tf32 = c->p.tf32;
	double loss = 0, loss_ref = 0;
	if ((rc = model_create(&m, &dev, &s, c->p.seed, p0)) || (rc = model_forward(m)) ||
	    (rc = model_backward(m)) || (rc = model_loss(m, &loss)) || (rc = model_grads(m, g)) ||
	    (rc = model_step(m)) || (rc = model_params(m, p1))) {
		code = wl_from_dev(st, &dev, rc, "validation model");
		goto done;
	}
	model_ref_loss_grad(cfg, VALIDATE_BATCH, VALIDATE_CTX, tok, tok + n, pd, &loss_ref, gref);
	char worst[48] = "";
	double err = model_grad_error(cfg, g, gref, worst, sizeof(worst));
	double loss_err = fabs(loss - loss_ref) / fabs(loss_ref);
	st->max_diff = fmax(err, loss_err);
	if (!(loss_err <= tol))
		code = wl_set(st, STATUS_ERROR, "loss %.9g differs from the float64 reference %.9g by "
			      "%.3g relative (tolerance %.3g)", loss, loss_ref, loss_err, tol);
	else if (!(err <= tol))
		code = wl_set(st, STATUS_ERROR, "gradient of %s differs from the float64 reference by "
			      "%.3g of its largest value (tolerance %.3g)", worst, err, tol);
	if (code)
		goto done;
	/* the AdamW step, from the backend's own gradients, in float64 (step 1: m = (1-b1) g,
	 * v = (1-b2) g², so the update is lr · g / (|g| + eps') with the bias corrections) */
	const struct adamw_params *hp = &model_adamw;
	double worst_step = model_adamw_first_step_error(p0, g, p1, P);
	/* float32 rounding of p (|p| < 1) and of the update (≤ lr) */
	if (!(worst_step <= 1e-6 + 1e-3 * hp->lr)) {
		code = wl_set(st, STATUS_ERROR, "AdamW step differs from the float64 formula by %.3g",
			      worst_step);
		goto done;
	}
	/* the second step, from the next forward and backward: step 1's check cannot see a step
	 * count that does not advance or a bias correction right only at step 1 */
	if ((rc = model_forward(m)) || (rc = model_backward(m)) || (rc = model_grads(m, g2)) ||
	    (rc = model_step(m)) || (rc = model_params(m, p2))) {
		code = wl_from_dev(st, &dev, rc, "validation model");
		goto done;
	}
	worst_step = model_adamw_second_step_error(p1, g, g2, p2, P);
	if (!(worst_step <= 1e-6 + 1e-3 * hp->lr))
		code = wl_set(st, STATUS_ERROR, "AdamW's second step differs from the float64 formula "
			      "by %.3g", worst_step);
done:
	model_free(m);
	dev_close(&dev);
	free(p0);
	free(g);
	free(p1);
	free(g2);
	free(p2);
	free(pd);
	free(gref);
	free(tok);
	return code;
}

/* Where the mean loss of n rows lies at initialisation, from the spread of a logit: the final
 * norm's output has RMS 1 (gains 1) and every lm_head weight variance MODEL_INIT_STD², so a logit
 * has variance s² = d·MODEL_INIT_STD² (1.0 at d_model 2560, 2.0 at 5120). A row's expected loss
 * E[lse(z)] − E[z_target] lies between ln V (Jensen, lse convex) and ln V + s²/2 (Jensen, log
 * concave: E[e^z] <= e^(s²/2) for these sums of uniforms); a row's loss varies by about s around
 * it (the target's logit), and the mean of n rows by s/sqrt(n) (4 of them allowed). A fixed
 * ±1 around ln V failed correct models from d_model 5000 on, and one case in ten of the small
 * preset at a single token. */
static void init_loss_range(const struct case_params *p, double *lo, double *hi)
{
	double lnv = log((double)p->model.vocab_size);
	double s2 = (double)p->model.d_model * MODEL_INIT_STD * MODEL_INIT_STD;
	double noise = 4.0 * sqrt(s2 / ((double)p->batch_size * (double)p->context_length));
	*lo = lnv - LOSS_INIT_SLACK - noise;
	*hi = lnv + s2 / 2 + LOSS_INIT_SLACK + noise;
}

static int e2e_validate(void *state, struct wl_status *st)
{
	struct e2e_case *e = state;
	struct wl_case *c = &e->c;
	int code = validate_tiny(c, st);
	if (code)
		return code;
	/* step 2: the case's own model, every phase once */
	unsigned phases = pass_phases(c->p.pass);
	int rc = model_forward(e->model);
	double loss = 0;
	if (!rc)
		rc = model_loss(e->model, &loss);
	if (!rc && (phases & (1u << PHASE_BWD)))
		rc = model_backward(e->model);
	if (!rc && (phases & (1u << PHASE_OPT)))
		rc = model_step(e->model);
	if (!rc)
		rc = c->dev.ops->sync(&c->dev);
	if (rc)
		return wl_from_dev(st, &c->dev, rc, "model");
	double lo, hi;
	init_loss_range(&c->p, &lo, &hi);
	if (!(loss >= lo && loss <= hi))
		return wl_set(st, STATUS_ERROR, "loss at initialisation is %.6g, expected %.6g to %.6g "
			      "(ln(%lld) = %.6g and the spread of the initial logits)", loss, lo, hi,
			      (long long)c->p.model.vocab_size, log((double)c->p.model.vocab_size));
	return wl_set(st, STATUS_OK, "%s", "");
}

static const char *const phase_ranges[PHASE_COUNT] = {"forward", "backward", "optimizer"};

/* One phase. On an asynchronous device (CUDA) this only enqueues the work: the runner times it
 * with the device's events (e2e_mark, e2e_elapsed) or, with sync: false, does not wait. */
static int e2e_run(void *state, enum bd_phase phase, struct wl_status *st)
{
	struct e2e_case *c = state;
	struct dev *dev = &c->c.dev;
	int rc = 0;
	if (phase < 0 || phase >= PHASE_COUNT)
		return wl_set(st, STATUS_ERROR, "unknown phase %d", (int)phase);
	dev_range_push(dev, "%s", phase_ranges[phase]);
	switch (phase) {
	case PHASE_FWD: rc = model_forward(c->model); break;
	case PHASE_BWD: rc = model_backward(c->model); break;
	default: rc = model_step(c->model); break;
	}
	dev_range_pop(dev);
	if (rc)
		return wl_from_dev(st, dev, rc, phase_name(phase));
	return STATUS_OK;
}

static void e2e_memory(void *state, struct wl_memory *out)
{
	struct e2e_case *c = state;
	struct model_memory mm = {0};
	if (c && c->model)
		model_memory(c->model, &mm);
	*out = memory_of(&mm);
}

static void e2e_teardown(void *state)
{
	struct e2e_case *c = state;
	if (c)
		model_free(c->model);
	wl_case_close(state);
}

const struct workload e2e_workload = {
	.suite = "e2e",
	.check = e2e_check,
	.figures = e2e_figures,
	.setup = e2e_setup,
	.validate = e2e_validate,
	.run = e2e_run,
	.memory = e2e_memory,
	.estimate = e2e_estimate,
	.teardown = e2e_teardown,
	.mark = wl_case_mark,
	.elapsed = wl_case_elapsed,
	.drain = wl_case_drain,
	.describe = wl_case_describe,
};
