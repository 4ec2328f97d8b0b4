/* kernels/cuda/sdpa_cudnn.c: scaled-dot-product attention through the cuDNN 9 backend graph API
 * from plain C (sdpa_cudnn.h). Which graph: the single SDPA_FWD / SDPA_BWD node where the
 * linked cuDNN has it and the shape allows (build_fwd_unified, build_bwd_unified, form_refusal),
 * else the composite graphs below; each failure on the way is kept (graph.fallback) and the graph
 * and engine that planned are reported (sdpa_plan_describe). The composite graphs mirror, node
 * for node, what cudnn-frontend builds on cuDNN 9.19 for bfloat16/float16 without dropout, bias
 * or padding (from 9.21 with the forward's softmax as one SOFTMAX node, its UnifiedSoftmaxNode):
 * CompositeSDPANode and
 * CompositeSDPABackwardNode (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h),
 * CompositeSoftmaxNode (node/softmax.h), causal_mask() = sliding_window_mask(TOP_LEFT, right
 * bound 0) (utils/attn_score_modifiers.h) lowered as CompositeDiagonalBandMaskNode
 * (node/diagonal_band_mask.h) with get_negative_inf_value() = -inf from cuDNN 9.10 on, and the
 * descriptor attributes its PointwiseNode, MatmulNode, ReductionNode, ReshapeNode, TensorBuilder
 * and EngineHeuristics set.
 *
 * Shapes: B, H, T, D = s->b, s->h, s->t, s->dh; io = float16/bfloat16 (float32 is attempted and
 * left for cuDNN to refuse). Every tensor has byte alignment 16; virtual ones are float32 unless
 * noted. UIDs: the enum below; virtual tensors count up from 100. "by value" tensors are float32
 * (1,1,1,1) whose variant-pack pointer is host memory in the plan.
 *
 * Forward (causal nodes only when s->causal):
 *   Q (1) (B,H,T,D) io; K^T (2) (B,H,D,T) strides (HTD,TD,1,D) over K's memory; V (3), O (4)
 *   (B,H,T,D) io; Stats (5) (B,H,T,1) float32; attn_scale (6) by value; -inf (7) by value.
 *   bmm1      matmul     S1 = Q · K^T                         (B,H,T,T)
 *   scale     mul        S2 = S1 · attn_scale
 *   causal    gen_index  R = row index of S2 (axis 2), C = column index (axis 3)   int32
 *             cmp_ge     M = R >= C                                                boolean
 *             select     S3 = M ? S2 : -inf
 *   softmax   reduce max Mx = max_j S3                        (B,H,T,1)
 *             sub, exp   E = exp(S3 - Mx)
 *             reduce add Z = sum_j E                          (B,H,T,1)
 *             log, add   Stats = Mx + log Z
 *             div        P = E / Z                            io (the frontend's bmm2 aType)
 *   bmm2      matmul     O = P · V
 * Backward (the frontend's non-deterministic path: float32 dQ accumulator, Delta in the graph):
 *   the forward's Q, K^T, O, Stats, attn_scale, -inf; V^T (3) (B,H,D,T) strides (HTD,TD,1,D);
 *   dO (8), dQ (9), dK (10), dV (11) (B,H,T,D) io; one (12) by value = 1.0f;
 *   softmax_sum (13) (B,H,T,1) float32 and dQ_accum (14) (B,H,T,D) float32, both in the workspace.
 *   mul_dO_O            mul        X = dO · O                 (B,H,T,D)
 *   reduce_dO_o         reduce add Delta = sum_d X            (B,H,T,1)
 *   scale_dropout_inv   mul        softmax_sum = Delta · one
 *   matmul_Q_KT         matmul     S1 = Q · K^T
 *   mul_s_attn_scale    mul        S2 = S1 · attn_scale
 *   sub_s_m             sub        S3 = S2 - Stats
 *   causal              as forward S4 = mask(S3)
 *   exp_s               exp        P = exp(S4)
 *   reshape_p           reshape    P^T (B,H,T,T) strides (HTT,TT,1,T), io
 *   matmul_pT_dO        matmul     dV = P^T · dO
 *   matmul_dO_VT        matmul     dP = dO · V^T
 *   sub_dP_softmax_sum  sub        T1 = dP - softmax_sum
 *   mul_dP_exp_s        mul        T2 = T1 · P
 *   mul_dS_attn_scale   mul        dS = T2 · attn_scale
 *   reshape_dS          reshape    dS^T (B,H,T,T) strides (HTT,TT,1,T), io
 *   matmul_dST_Q        matmul     dK = dS^T · Q
 *   reshape_k           reshape    K (B,H,T,D) strides (HTD,TD,D,1) from K^T (float32 virtual,
 *                                  as the frontend leaves it)
 *   matmul_dS_K         matmul     dQ_accum = dS · K
 *   identity_dQ         identity   dQ = dQ_accum
 *
 * Engine choice: heuristics mode A, then FALLBACK; configs tried in order until one finalizes.
 * Every descriptor of a graph stays alive until the plan is freed (the frontend keeps them all).
 */
#include "sdpa_cudnn.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <cudnn.h>

/* The headers CMake found (CUDNN_INCLUDE_DIR, BENCHDB_CUDNN_ROOT) are the ones included here. */
#if defined(BENCHDB_CUDNN_HEADER_VERSION) && CUDNN_VERSION != BENCHDB_CUDNN_HEADER_VERSION
#error "cudnn.h is not the one CMake found: another cuDNN's headers come first on the include path"
#endif

#include "flash.h"
#include "strbuf.h"
#include "vocab.h"

#define TENSOR_ALIGNMENT 16    /* bytes; CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT of every tensor */
#define SDPA_GRAPH_ENV "BENCHDB_SDPA_GRAPH"   /* auto (default), unified or composite */
#define WORKSPACE_ALIGN 256    /* bytes; offsets of the backward's scratch in the workspace */
#define MAX_OPS 32             /* the causal backward has 22 */

/* Unique ids: the tensors a variant pack carries, then the virtual ones. */
enum {
	UID_Q = 1,
	UID_K,              /* as K^T (composite), as K (unified) */
	UID_V,              /* as V, or V^T in the composite backward */
	UID_O,
	UID_STATS,
	UID_SCALE,
	UID_NEG_INF,
	UID_DO,
	UID_DQ,
	UID_DK,
	UID_DV,
	UID_ONE,
	UID_SOFTMAX_SUM,
	UID_DQ_ACCUM,
	UID_VIRTUAL = 100,
};

struct sdpa_ctx {
	cudnnHandle_t handle;
};

/* Which graph of an operation to build (see the file comment), in the order build() tries them. */
enum graph_form {
	FORM_UNIFIED_921,     /* SDPA_FWD node with the nodes of cuDNN 9.21: Stats through a SOFTMAX
			       * node, a causal mask as a DIAGONAL_BAND_MASK subgraph */
	FORM_UNIFIED,         /* SDPA_FWD node, Stats through STATSDESC (>= 9.13.1); SDPA_BWD (>= 9.27) */
	FORM_COMPOSITE_921,   /* the composite graphs with the nodes of 9.21: one SOFTMAX node (forward),
			       * one DIAGONAL_BAND_MASK node for a causal mask (both directions) */
	FORM_COMPOSITE,       /* the composite graphs of 9.19 (pointwise softmax and mask chains) */
	FORM_COUNT
};

static const char *const form_names[FORM_COUNT] = {
	[FORM_UNIFIED_921] = "unified-9.21",
	[FORM_UNIFIED] = "unified",
	[FORM_COMPOSITE_921] = "composite-9.21",
	[FORM_COMPOSITE] = "composite",
};

static int form_is_unified(enum graph_form f)
{
	return f == FORM_UNIFIED_921 || f == FORM_UNIFIED;
}

/* What planned: the engine config the heuristics gave and the engine it names. */
#define ENGINE_KNOBS_MAX 32
#define ENGINE_NOTES_MAX 16

struct engine_info {
	int64_t global_index;     /* CUDNN_ATTR_ENGINE_GLOBAL_INDEX; -1 when cuDNN did not say */
	const char *heuristics;   /* "A" or "FALLBACK" */
	int64_t config;           /* position in that mode's list */
	int nknobs;
	int64_t knob_type[ENGINE_KNOBS_MAX], knob_value[ENGINE_KNOBS_MAX];   /* cudnnBackendKnobType_t */
	int nnumerical, nbehavior;
	int numerical[ENGINE_NOTES_MAX];   /* cudnnBackendNumericalNote_t */
	int behavior[ENGINE_NOTES_MAX];    /* cudnnBackendBehaviorNote_t */
};

/* One finalized execution plan and every descriptor it was built from, in creation order. */
#define PACK_MAX 16   /* tensors in a variant pack: the backward's 14 at most */

struct graph {
	cudnnBackendDescriptor_t *descs;
	int ndescs, cap;
	cudnnBackendDescriptor_t plan;   /* one of descs; NULL until an engine config finalizes */
	int64_t workspace;               /* bytes the plan asks for */
	enum graph_form form;            /* the graph the plan was built from */
	struct engine_info engine;
	char fallback[768];              /* the forms tried or passed over before it, and why */
	/* The last variant pack and what it holds: a benchmark executes with the same buffers every
	 * iteration, so the pack is built once, not inside each timed call. */
	cudnnBackendDescriptor_t pack;
	int64_t pack_n;
	void *pack_ptrs[PACK_MAX], *pack_ws;
};

struct sdpa_plan {
	struct cuda_flash_shape s;
	int backward;
	struct graph fwd, bwd;
	float scale, neg_inf, one;   /* by-value scalars: host memory cuDNN reads at each execute */
	size_t softmax_sum_at;       /* bytes into the workspace; the backward's dQ_accum is at 0 */
	size_t bwd_workspace_at;     /* bytes into the workspace: the backward plan's own */
	size_t workspace;            /* bytes: max of forward and backward */
};

/* Builds one graph. The first failing call records status, step and cuDNN's message; every
 * later call does nothing, so a graph reads straight down with one check at the end. */
struct builder {
	cudnnHandle_t handle;
	struct graph *g;
	cudnnStatus_t status;
	int no_engine;           /* the failure is that no engine config finalized */
	char step[256];
	char msg[512];           /* cudnnGetLastErrorString() right after the failure */
	int64_t next_uid;        /* of the next virtual tensor */
	enum graph_form form;
	cudnnBackendDescriptor_t ops[MAX_OPS];
	int nops;
};

/* The first failure of an engine-config search, which goes on past it. */
struct attempt {
	cudnnStatus_t status;
	char step[192];
	char msg[512];
};

static void say(char *why, size_t n, const char *fmt, ...)
{
	if (!why || !n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

static void last_error(char *msg, size_t n)
{
	msg[0] = '\0';
	cudnnGetLastErrorString(msg, n);
	if (!msg[0])
		snprintf(msg, n, "(no message from cudnnGetLastErrorString)");
}

static void fail_step(struct builder *b, cudnnStatus_t st, const char *what, const char *action)
{
	b->status = st;
	snprintf(b->step, sizeof(b->step), "%s: %s", what, action);
	last_error(b->msg, sizeof(b->msg));
}

static void note(struct attempt *first, cudnnStatus_t st, const char *what, const char *action)
{
	if (first->status != CUDNN_STATUS_SUCCESS)
		return;
	first->status = st;
	snprintf(first->step, sizeof(first->step), "%s: %s", what, action);
	last_error(first->msg, sizeof(first->msg));
}

/* ---- descriptors ----------------------------------------------------------------------------- */

static void graph_free(struct graph *g)
{
	if (g->pack)
		(void)cudnnBackendDestroyDescriptor(g->pack);
	for (int i = g->ndescs - 1; i >= 0; i--)
		(void)cudnnBackendDestroyDescriptor(g->descs[i]);
	free(g->descs);
	*g = (struct graph){0};
}

static cudnnBackendDescriptor_t create(struct builder *b, cudnnBackendDescriptorType_t type,
				       const char *what)
{
	if (b->status != CUDNN_STATUS_SUCCESS)
		return NULL;
	struct graph *g = b->g;
	if (g->ndescs == g->cap) {
		int cap = g->cap ? 2 * g->cap : 128;
		cudnnBackendDescriptor_t *grown = realloc(g->descs, (size_t)cap * sizeof(*grown));
		if (!grown) {
			fail_step(b, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, what,
				  "out of host memory for the descriptor list");
			return NULL;
		}
		g->descs = grown;
		g->cap = cap;
	}
	cudnnBackendDescriptor_t d = NULL;
	cudnnStatus_t st = cudnnBackendCreateDescriptor(type, &d);
	if (st != CUDNN_STATUS_SUCCESS) {
		fail_step(b, st, what, "cudnnBackendCreateDescriptor");
		return NULL;
	}
	g->descs[g->ndescs++] = d;
	return d;
}

/* Destroys d, the descriptor create() made last (a candidate plan that did not finalize). */
static void discard_last(struct builder *b, cudnnBackendDescriptor_t d)
{
	struct graph *g = b->g;
	if (g->ndescs > 0 && g->descs[g->ndescs - 1] == d) {
		g->ndescs--;
		(void)cudnnBackendDestroyDescriptor(d);
	}
}

#define SET(b, d, attr, type, n, value, what)                                                   \
	set_attr((b), (d), (attr), #attr, (type), (n), (value), (what))
/* A descriptor-valued attribute: d's attr is desc. */
#define SET_DESC(b, d, attr, desc, what)                                                        \
	set_attr((b), (d), (attr), #attr, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &(desc), (what))

static void set_attr(struct builder *b, cudnnBackendDescriptor_t d,
		     cudnnBackendAttributeName_t attr, const char *attr_name,
		     cudnnBackendAttributeType_t type, int64_t n, const void *value,
		     const char *what)
{
	if (b->status != CUDNN_STATUS_SUCCESS)
		return;
	cudnnStatus_t st = cudnnBackendSetAttribute(d, attr, type, n, value);
	if (st != CUDNN_STATUS_SUCCESS) {
		char action[128];
		snprintf(action, sizeof(action), "set %s", attr_name);
		fail_step(b, st, what, action);
	}
}

static void finalize(struct builder *b, cudnnBackendDescriptor_t d, const char *what)
{
	if (b->status != CUDNN_STATUS_SUCCESS)
		return;
	cudnnStatus_t st = cudnnBackendFinalize(d);
	if (st != CUDNN_STATUS_SUCCESS)
		fail_step(b, st, what, "finalize");
}

/* ---- tensors and operations ------------------------------------------------------------------ */

/* A rank-4 tensor, with the attributes the frontend's TensorBuilder sets. */
static cudnnBackendDescriptor_t tensor(struct builder *b, const char *what, int64_t uid,
				       cudnnDataType_t dtype, const int64_t dim[4],
				       const int64_t stride[4], bool is_virtual, bool by_value)
{
	int64_t alignment = TENSOR_ALIGNMENT;
	cudnnBackendDescriptor_t t = create(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
	SET(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dtype, what);
	SET(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim, what);
	SET(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, stride, what);
	SET(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
	SET(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment, what);
	SET(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual, what);
	if (by_value)
		SET(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
	finalize(b, t, what);
	return t;
}

static cudnnBackendDescriptor_t virt(struct builder *b, const char *what, cudnnDataType_t dtype,
				     const int64_t dim[4], const int64_t stride[4])
{
	return tensor(b, what, b->next_uid++, dtype, dim, stride, true, false);
}

/* A float32 scalar passed by value: the frontend's fused scalar, expanded to (1,1,1,1). */
static cudnnBackendDescriptor_t scalar(struct builder *b, const char *what, int64_t uid)
{
	static const int64_t ones[4] = {1, 1, 1, 1};
	return tensor(b, what, uid, CUDNN_DATA_FLOAT, ones, ones, false, true);
}

static void add_op(struct builder *b, cudnnBackendDescriptor_t op, const char *what)
{
	if (b->status != CUDNN_STATUS_SUCCESS)
		return;
	if (b->nops == MAX_OPS) {
		fail_step(b, CUDNN_STATUS_BAD_PARAM, what, "more operations than MAX_OPS");
		return;
	}
	b->ops[b->nops++] = op;
}

/* Finalize op and add it to the graph's operations. */
static void finish_op(struct builder *b, cudnnBackendDescriptor_t op, const char *what)
{
	finalize(b, op, what);
	add_op(b, op, what);
}

/* y = mode(x [, b2 [, t]]) computed in prec; axis >= 0 only for GEN_INDEX. */
static void pointwise(struct builder *b, const char *what, cudnnPointwiseMode_t mode,
		      cudnnDataType_t prec, int64_t axis, cudnnBackendDescriptor_t x,
		      cudnnBackendDescriptor_t b2, cudnnBackendDescriptor_t t,
		      cudnnBackendDescriptor_t y)
{
	float alpha1 = 1.0f, alpha2 = 1.0f;
	cudnnBackendDescriptor_t pw = create(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
	SET(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
	SET(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, what);
	if (axis >= 0)
		SET(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
	finalize(b, pw, what);

	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x, what);
	if (b2)
		SET_DESC(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b2, what);
	if (t)
		SET_DESC(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y, what);
	SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &alpha1, what);
	SET(b, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &alpha2, what);
	finish_op(b, op, what);
}

/* c = a · b2 over the last two dims, batched over the first two; float32 compute. */
static void matmul(struct builder *b, const char *what, cudnnBackendDescriptor_t a,
		   cudnnBackendDescriptor_t b2, cudnnBackendDescriptor_t c)
{
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	double padding = 0.0;   /* the frontend always sets it (Matmul_attributes' default) */
	cudnnBackendDescriptor_t mm = create(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
	SET(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
	SET(b, mm, CUDNN_ATTR_MATMUL_PADDING_VALUE, CUDNN_TYPE_DOUBLE, 1, &padding, what);
	finalize(b, mm, what);

	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, b2, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm, what);
	finish_op(b, op, what);
}

/* y = reduce(x) over the dims where y is 1; float32 compute, not deterministic. */
static void reduction(struct builder *b, const char *what, cudnnReduceTensorOp_t mode,
		      cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	bool deterministic = false;
	cudnnBackendDescriptor_t rd = create(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
	SET(b, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
	    1, &mode, what);
	SET(b, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
	if (cudnnGetVersion() >= 91100)   /* the frontend sets it from 9.11 on */
		SET(b, rd, CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, CUDNN_TYPE_BOOLEAN, 1,
		    &deterministic, what);
	finalize(b, rd, what);

	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, rd, what);
	finish_op(b, op, what);
}

/* y = x seen through y's dims and strides (the backward's transposes). */
static void reshape(struct builder *b, const char *what, cudnnBackendDescriptor_t x,
		    cudnnBackendDescriptor_t y)
{
	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y, what);
	finish_op(b, op, what);
}

/* score where row >= column, else -inf: the frontend's causal_mask (top-left diagonal, right
 * bound 0, comparison CMP_GE). score is (B,H,T,T) float32 with strides ss. */
static cudnnBackendDescriptor_t causal_mask(struct builder *b, cudnnBackendDescriptor_t score,
					    const int64_t sd[4], const int64_t ss[4])
{
	cudnnBackendDescriptor_t neg_inf = scalar(b, "causal -inf", UID_NEG_INF);
	cudnnBackendDescriptor_t row = virt(b, "causal row index", CUDNN_DATA_INT32, sd, ss);
	cudnnBackendDescriptor_t col = virt(b, "causal column index", CUDNN_DATA_INT32, sd, ss);
	cudnnBackendDescriptor_t keep = virt(b, "causal keep", CUDNN_DATA_BOOLEAN, sd, ss);
	cudnnBackendDescriptor_t out = virt(b, "causal masked score", CUDNN_DATA_FLOAT, sd, ss);
	pointwise(b, "gen_row_index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 2, score, NULL,
		  NULL, row);
	pointwise(b, "gen_col_index", CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 3, score, NULL,
		  NULL, col);
	pointwise(b, "row_greater_than_col", CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row,
		  col, NULL, keep);
	pointwise(b, "binary_select", CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, score,
		  neg_inf, keep, out);
	return out;
}

/* score where row >= column, else -inf, as one DIAGONAL_BAND_MASK node (cuDNN >= 9.21: the
 * frontend's UnifiedDiagonalBandMaskNode for causal_mask(), a right bound at the diagonal with
 * no shift: comparison CMP_GE of row against column). out is the masked score; the node is added
 * to the graph's operations when add, else returned for a subgraph. */
static cudnnBackendDescriptor_t causal_band(struct builder *b, cudnnBackendDescriptor_t score,
					    cudnnBackendDescriptor_t out, int add)
{
	const char *what = "causal band mask node";
	cudnnBackendDescriptor_t neg_inf = scalar(b, "causal -inf", UID_NEG_INF);
#if CUDNN_VERSION >= 92100
	cudnnPointwiseMode_t cmp = CUDNN_POINTWISE_CMP_GE;
	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR,
					     what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_XDESC, score, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_BDESC, neg_inf, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_YDESC, out, what);
	SET(b, op, CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_COMPARISON_MODE, CUDNN_TYPE_POINTWISE_MODE,
	    1, &cmp, what);
	finalize(b, op, what);
	if (add)
		add_op(b, op, what);
	return op;
#else
	(void)score, (void)out, (void)add, (void)neg_inf;
	fail_step(b, CUDNN_STATUS_NOT_SUPPORTED, what, "not in this cuDNN's headers (9.21 and later)");
	return NULL;
#endif
}

/* The causal mask of the composite graphs: one band node in the 9.21 form, else the chain. */
static cudnnBackendDescriptor_t composite_mask(struct builder *b, cudnnBackendDescriptor_t score,
					       const int64_t sd[4], const int64_t ss[4])
{
	if (b->form != FORM_COMPOSITE_921)
		return causal_mask(b, score, sd, ss);
	cudnnBackendDescriptor_t out = virt(b, "causal masked score", CUDNN_DATA_FLOAT, sd, ss);
	causal_band(b, score, out, 1);
	return out;
}

/* ---- the two graphs -------------------------------------------------------------------------- */

struct dims {
	int64_t qd[4], qs[4];     /* (B,H,T,D) contiguous */
	int64_t td[4], ts[4];     /* (B,H,D,T) over a (B,H,T,D) buffer: K^T, V^T */
	int64_t sd[4], ss[4];     /* (B,H,T,T) contiguous: scores */
	int64_t st_s[4];          /* strides of the (B,H,T,T) transposed view of a score */
	int64_t rd[4], rs[4];     /* (B,H,T,1): row statistics */
};

static void dims_of(struct dims *d, const struct cuda_flash_shape *s)
{
	const int64_t B = s->b, H = s->h, T = s->t, D = s->dh;
	*d = (struct dims){
		.qd = {B, H, T, D}, .qs = {H * T * D, T * D, D, 1},
		.td = {B, H, D, T}, .ts = {H * T * D, T * D, 1, D},
		.sd = {B, H, T, T}, .ss = {H * T * T, T * T, T, 1},
		.st_s = {H * T * T, T * T, 1, T},
		.rd = {B, H, T, 1}, .rs = {H * T, T, 1, 1},
	};
}

/* P = softmax_rows(score) and Stats = max + log Σ exp(score - max) as one SOFTMAX node (cuDNN
 * >= 9.21: the frontend's UnifiedSoftmaxNode). Returns the descriptor, finalized; added to the
 * graph's operations when add (the composite forward), else only referenced (the unified
 * node's CUDNN_ATTR_OPERATION_SDPA_FWD_SOFTMAX_DESC). */
static cudnnBackendDescriptor_t softmax_node(struct builder *b, cudnnBackendDescriptor_t score,
					     cudnnBackendDescriptor_t p,
					     cudnnBackendDescriptor_t stats, int add)
{
	const char *what = "softmax node";
#if CUDNN_VERSION >= 92100
	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SOFTMAX_XDESC, score, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SOFTMAX_YDESC, p, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SOFTMAX_STATS_DESC, stats, what);
	finalize(b, op, what);
	if (add)
		add_op(b, op, what);
	return op;
#else
	(void)score, (void)p, (void)stats, (void)add;
	fail_step(b, CUDNN_STATUS_NOT_SUPPORTED, what, "not in this cuDNN's headers (9.21 and later)");
	return NULL;
#endif
}

/* The forward's variant-pack tensors: Q, K (as K^T over K's memory for the composite graph,
 * as K for the unified node), V, O, Stats, attn_scale. */
struct fwd_tensors {
	cudnnBackendDescriptor_t q, k, v, o, stats, scale;
};

static struct fwd_tensors fwd_tensors(struct builder *b, const struct dims *d, cudnnDataType_t io,
				      bool k_transposed)
{
	struct fwd_tensors t;
	t.q = tensor(b, "Q", UID_Q, io, d->qd, d->qs, false, false);
	if (k_transposed)
		t.k = tensor(b, "K^T", UID_K, io, d->td, d->ts, false, false);
	else
		t.k = tensor(b, "K", UID_K, io, d->qd, d->qs, false, false);
	t.v = tensor(b, "V", UID_V, io, d->qd, d->qs, false, false);
	t.o = tensor(b, "O", UID_O, io, d->qd, d->qs, false, false);
	t.stats = tensor(b, "Stats", UID_STATS, CUDNN_DATA_FLOAT, d->rd, d->rs, false, false);
	t.scale = scalar(b, "attn_scale", UID_SCALE);
	return t;
}

/* The backward's: Q, K and V (as K^T and V^T over their memory for the composite graph, as K
 * and V for the unified node), O, Stats, dO, dQ, dK, dV, attn_scale. */
struct bwd_tensors {
	cudnnBackendDescriptor_t q, k, v, o, stats, d_o, dq, dk, dv, scale;
};

static struct bwd_tensors bwd_tensors(struct builder *b, const struct dims *d, cudnnDataType_t io,
				      bool kv_transposed)
{
	struct bwd_tensors t;
	t.q = tensor(b, "Q", UID_Q, io, d->qd, d->qs, false, false);
	if (kv_transposed) {
		t.k = tensor(b, "K^T", UID_K, io, d->td, d->ts, false, false);
		t.v = tensor(b, "V^T", UID_V, io, d->td, d->ts, false, false);
	} else {
		t.k = tensor(b, "K", UID_K, io, d->qd, d->qs, false, false);
		t.v = tensor(b, "V", UID_V, io, d->qd, d->qs, false, false);
	}
	t.o = tensor(b, "O", UID_O, io, d->qd, d->qs, false, false);
	t.stats = tensor(b, "Stats", UID_STATS, CUDNN_DATA_FLOAT, d->rd, d->rs, false, false);
	t.d_o = tensor(b, "dO", UID_DO, io, d->qd, d->qs, false, false);
	t.dq = tensor(b, "dQ", UID_DQ, io, d->qd, d->qs, false, false);
	t.dk = tensor(b, "dK", UID_DK, io, d->qd, d->qs, false, false);
	t.dv = tensor(b, "dV", UID_DV, io, d->qd, d->qs, false, false);
	t.scale = scalar(b, "attn_scale", UID_SCALE);
	return t;
}

static void build_fwd(struct builder *b, const struct cuda_flash_shape *s, cudnnDataType_t io)
{
	const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	struct dims d;
	dims_of(&d, s);
	struct fwd_tensors t = fwd_tensors(b, &d, io, true);
	cudnnBackendDescriptor_t q = t.q, kt = t.k, v = t.v, o = t.o, stats = t.stats,
				 scale = t.scale;

	cudnnBackendDescriptor_t s1 = virt(b, "bmm1 output", f32, d.sd, d.ss);
	matmul(b, "bmm1", q, kt, s1);
	cudnnBackendDescriptor_t s2 = virt(b, "attn_scale output", f32, d.sd, d.ss);
	pointwise(b, "attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s1, scale, NULL, s2);
	cudnnBackendDescriptor_t score = s->causal ? composite_mask(b, s2, d.sd, d.ss) : s2;

	if (b->form == FORM_COMPOSITE_921) {
		cudnnBackendDescriptor_t p = virt(b, "softmax P", io, d.sd, d.ss);
		softmax_node(b, score, p, stats, 1);
		matmul(b, "bmm2", p, v, o);
		return;
	}
	cudnnBackendDescriptor_t max = virt(b, "softmax max", f32, d.rd, d.rs);
	reduction(b, "softmax max", CUDNN_REDUCE_TENSOR_MAX, score, max);
	cudnnBackendDescriptor_t sub = virt(b, "softmax sub output", f32, d.sd, d.ss);
	pointwise(b, "softmax sub", CUDNN_POINTWISE_SUB, f32, -1, score, max, NULL, sub);
	cudnnBackendDescriptor_t e = virt(b, "softmax exp output", f32, d.sd, d.ss);
	pointwise(b, "softmax exp", CUDNN_POINTWISE_EXP, f32, -1, sub, NULL, NULL, e);
	cudnnBackendDescriptor_t sum = virt(b, "softmax sum", f32, d.rd, d.rs);
	reduction(b, "softmax sum", CUDNN_REDUCE_TENSOR_ADD, e, sum);
	cudnnBackendDescriptor_t log_sum = virt(b, "softmax log output", f32, d.rd, d.rs);
	pointwise(b, "softmax log", CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, log_sum);
	pointwise(b, "softmax stats", CUDNN_POINTWISE_ADD, f32, -1, max, log_sum, NULL, stats);
	cudnnBackendDescriptor_t p = virt(b, "softmax P", io, d.sd, d.ss);
	pointwise(b, "softmax div", CUDNN_POINTWISE_DIV, f32, -1, e, sum, NULL, p);

	matmul(b, "bmm2", p, v, o);
}

static void build_bwd(struct builder *b, const struct cuda_flash_shape *s, cudnnDataType_t io)
{
	const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	struct dims d;
	dims_of(&d, s);

	struct bwd_tensors t = bwd_tensors(b, &d, io, true);
	cudnnBackendDescriptor_t q = t.q, kt = t.k, vt = t.v, o = t.o, stats = t.stats, d_o = t.d_o,
				 dq = t.dq, dk = t.dk, dv = t.dv, scale = t.scale;
	cudnnBackendDescriptor_t one = scalar(b, "one", UID_ONE);
	cudnnBackendDescriptor_t softmax_sum = tensor(b, "softmax_sum", UID_SOFTMAX_SUM, f32, d.rd,
						      d.rs, false, false);
	cudnnBackendDescriptor_t dq_accum = tensor(b, "dQ_accum", UID_DQ_ACCUM, f32, d.qd, d.qs,
						   false, false);

	/* softmax_sum = rowsum(dO ∘ O), Delta of FlashAttention-2 */
	cudnnBackendDescriptor_t doo = virt(b, "mul_dO_O output", f32, d.qd, d.qs);
	pointwise(b, "mul_dO_O", CUDNN_POINTWISE_MUL, f32, -1, d_o, o, NULL, doo);
	cudnnBackendDescriptor_t delta = virt(b, "reduce_dO_o output", f32, d.rd, d.rs);
	reduction(b, "reduce_dO_o", CUDNN_REDUCE_TENSOR_ADD, doo, delta);
	pointwise(b, "scale_dropout_inv", CUDNN_POINTWISE_MUL, f32, -1, delta, one, NULL,
		  softmax_sum);

	/* P = exp(scale · Q K^T - Stats), masked */
	cudnnBackendDescriptor_t s1 = virt(b, "matmul_Q_KT output", f32, d.sd, d.ss);
	matmul(b, "matmul_Q_KT", q, kt, s1);
	cudnnBackendDescriptor_t s2 = virt(b, "mul_s_attn_scale output", f32, d.sd, d.ss);
	pointwise(b, "mul_s_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, s1, scale, NULL, s2);
	cudnnBackendDescriptor_t s3 = virt(b, "sub_s_m output", f32, d.sd, d.ss);
	pointwise(b, "sub_s_m", CUDNN_POINTWISE_SUB, f32, -1, s2, stats, NULL, s3);
	cudnnBackendDescriptor_t score = s->causal ? composite_mask(b, s3, d.sd, d.ss) : s3;
	cudnnBackendDescriptor_t p = virt(b, "exp_s output", f32, d.sd, d.ss);
	pointwise(b, "exp_s", CUDNN_POINTWISE_EXP, f32, -1, score, NULL, NULL, p);

	/* dV = P^T dO */
	cudnnBackendDescriptor_t pt = virt(b, "reshape_p output", io, d.sd, d.st_s);
	reshape(b, "reshape_p", p, pt);
	matmul(b, "matmul_pT_dO", pt, d_o, dv);

	/* dS = scale · P ∘ (dO V^T - softmax_sum) */
	cudnnBackendDescriptor_t dp = virt(b, "matmul_dO_VT output", f32, d.sd, d.ss);
	matmul(b, "matmul_dO_VT", d_o, vt, dp);
	cudnnBackendDescriptor_t t1 = virt(b, "sub_dP_softmax_sum output", f32, d.sd, d.ss);
	pointwise(b, "sub_dP_softmax_sum", CUDNN_POINTWISE_SUB, f32, -1, dp, softmax_sum, NULL, t1);
	cudnnBackendDescriptor_t t2 = virt(b, "mul_dP_exp_s output", f32, d.sd, d.ss);
	pointwise(b, "mul_dP_exp_s", CUDNN_POINTWISE_MUL, f32, -1, t1, p, NULL, t2);
	cudnnBackendDescriptor_t ds = virt(b, "mul_dS_attn_scale output", f32, d.sd, d.ss);
	pointwise(b, "mul_dS_attn_scale", CUDNN_POINTWISE_MUL, f32, -1, t2, scale, NULL, ds);

	/* dK = dS^T Q */
	cudnnBackendDescriptor_t dst = virt(b, "reshape_dS output", io, d.sd, d.st_s);
	reshape(b, "reshape_dS", ds, dst);
	matmul(b, "matmul_dST_Q", dst, q, dk);

	/* dQ = dS K, accumulated in float32, then converted */
	cudnnBackendDescriptor_t k = virt(b, "reshape_k output", f32, d.qd, d.qs);
	reshape(b, "reshape_k", kt, k);
	matmul(b, "matmul_dS_K", ds, k, dq_accum);
	pointwise(b, "identity_dQ", CUDNN_POINTWISE_IDENTITY, f32, -1, dq_accum, NULL, NULL, dq);
}

/* The unified forward: one CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR over Q, K (as K, not
 * K^T), V, O and the by-value scale, as cudnn-frontend's UnifiedSDPANode (node/
 * scaled_dot_product_flash_attention.h) lowers an SDPA without bias, dropout or padding: Stats
 * through CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC below cuDNN 9.21, through a SOFTMAX node
 * (virtual float32 (B,H,T,T) input and output) set as CUDNN_ATTR_OPERATION_SDPA_FWD_SOFTMAX_DESC
 * from 9.21 on (FORM_UNIFIED_921); causal (9.21 form only): the score modifier subgraph of
 * causal_mask(), an operation graph of one DIAGONAL_BAND_MASK node from a virtual (B,H,T,T)
 * float32 input to its output (CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH and its input and output
 * UIDs), its -inf scalar in the variant pack (UID_NEG_INF). */
static void build_fwd_unified(struct builder *b, const struct cuda_flash_shape *s,
			      cudnnDataType_t io)
{
	const char *what = "SDPA_FWD node";
	const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
	struct dims d;
	dims_of(&d, s);
	struct fwd_tensors t = fwd_tensors(b, &d, io, false);
	cudnnBackendDescriptor_t q = t.q, k = t.k, v = t.v, o = t.o, stats = t.stats, scale = t.scale;
	cudnnBackendDescriptor_t softmax = NULL, subgraph = NULL;
	int64_t sub_in = 0, sub_out = 0;
	if (b->form == FORM_UNIFIED_921) {
		cudnnBackendDescriptor_t p = virt(b, "softmax_P", f32, d.sd, d.ss);
		cudnnBackendDescriptor_t sm = virt(b, "softmax_S", f32, d.sd, d.ss);
		softmax = softmax_node(b, p, sm, stats, 0);
	}
	if (s->causal) {
		/* the score modifier: a graph of its own, from the scores (sub_in) to the masked
		 * scores (sub_out), which the node applies inside its kernel */
		const char *sg = "causal subgraph";
		sub_in = b->next_uid;
		cudnnBackendDescriptor_t in = virt(b, "subgraph input", f32, d.sd, d.ss);
		sub_out = b->next_uid;
		cudnnBackendDescriptor_t out = virt(b, "subgraph output", f32, d.sd, d.ss);
		cudnnBackendDescriptor_t band = causal_band(b, in, out, 0);
		subgraph = create(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, sg);
		SET(b, subgraph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &b->handle, sg);
		SET_DESC(b, subgraph, CUDNN_ATTR_OPERATIONGRAPH_OPS, band, sg);
		finalize(b, subgraph, sg);
	}
#if CUDNN_VERSION >= 91300
	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, q, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, k, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, v, what);
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, o, what);
	if (softmax) {
#if CUDNN_VERSION >= 92100
		SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SOFTMAX_DESC, softmax, what);
#endif
	} else {
		SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, stats, what);
	}
	SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, scale, what);
	if (subgraph) {
#if CUDNN_VERSION >= 92100
		SET_DESC(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH, subgraph, what);
		SET(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH_INPUT_UID, CUDNN_TYPE_INT64, 1,
		    &sub_in, what);
		SET(b, op, CUDNN_ATTR_OPERATION_SDPA_FWD_SUBGRAPH_OUTPUT_UID, CUDNN_TYPE_INT64, 1,
		    &sub_out, what);
#else
		(void)sub_in, (void)sub_out;
#endif
	}
	finish_op(b, op, what);
#else
	(void)q, (void)k, (void)v, (void)o, (void)scale, (void)softmax, (void)subgraph;
	(void)sub_in, (void)sub_out;
	fail_step(b, CUDNN_STATUS_NOT_SUPPORTED, what, "not in this cuDNN's headers (9.13 and later)");
#endif
}

/* The unified backward: one CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR over Q, K, V, O, dO,
 * Stats, dQ, dK, dV and the scale, as the frontend's UnifiedSDPABackwardNode. It keeps its
 * scratch (dQ accumulator, Delta) in the plan's own workspace. */
static void build_bwd_unified(struct builder *b, const struct cuda_flash_shape *s,
			      cudnnDataType_t io)
{
	const char *what = "SDPA_BWD node";
	struct dims d;
	dims_of(&d, s);
	struct bwd_tensors t = bwd_tensors(b, &d, io, false);
#if CUDNN_VERSION >= 91700
	cudnnBackendDescriptor_t op = create(b, CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, what);
#define WIRE(attr, t) {attr, #attr, &t}
	const struct {
		cudnnBackendAttributeName_t attr;
		const char *name;
		cudnnBackendDescriptor_t *t;
	} wires[] = {
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, t.q),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, t.k),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, t.v),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, t.o),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, t.d_o),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, t.stats),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, t.dq),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, t.dk),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, t.dv),
		WIRE(CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, t.scale),
	};
#undef WIRE
	for (size_t i = 0; i < sizeof(wires) / sizeof(wires[0]); i++)
		set_attr(b, op, wires[i].attr, wires[i].name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
			 wires[i].t, what);
	finish_op(b, op, what);
#else
	(void)t;
	fail_step(b, CUDNN_STATUS_NOT_SUPPORTED, what, "not in this cuDNN's headers (9.17 and later)");
#endif
}

/* ---- engine choice --------------------------------------------------------------------------- */

/* What cfg runs, into e: the engine's global index and notes, the knob choices. Best effort: a
 * query cuDNN refuses leaves its part unknown (index -1, no knobs or notes). */
static void engine_info(struct engine_info *e, cudnnBackendDescriptor_t cfg)
{
	cudnnBackendDescriptor_t engine = NULL, knobs[ENGINE_KNOBS_MAX] = {0};
	int64_t n = 0;
	int nknobs = 0;
	e->global_index = -1;
	e->nknobs = e->nnumerical = e->nbehavior = 0;
	if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) !=
	    CUDNN_STATUS_SUCCESS) {
		engine = NULL;
		goto knobs;
	}
	if (cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
				     1, &n, &engine) != CUDNN_STATUS_SUCCESS || n != 1)
		goto knobs;
	int64_t index = -1;
	if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
				     &index) == CUDNN_STATUS_SUCCESS && n == 1)
		e->global_index = index;
	cudnnBackendNumericalNote_t numerical[ENGINE_NOTES_MAX];
	if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
				     CUDNN_TYPE_NUMERICAL_NOTE, ENGINE_NOTES_MAX, &n, numerical) ==
	    CUDNN_STATUS_SUCCESS)
		for (int64_t i = 0; i < n && i < ENGINE_NOTES_MAX; i++)
			e->numerical[e->nnumerical++] = (int)numerical[i];
	cudnnBackendBehaviorNote_t behavior[ENGINE_NOTES_MAX];
	if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
				     CUDNN_TYPE_BEHAVIOR_NOTE, ENGINE_NOTES_MAX, &n, behavior) ==
	    CUDNN_STATUS_SUCCESS)
		for (int64_t i = 0; i < n && i < ENGINE_NOTES_MAX; i++)
			e->behavior[e->nbehavior++] = (int)behavior[i];
knobs:
	for (; nknobs < ENGINE_KNOBS_MAX; nknobs++)
		if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[nknobs]) !=
		    CUDNN_STATUS_SUCCESS) {
			knobs[nknobs] = NULL;
			break;
		}
	if (nknobs == ENGINE_KNOBS_MAX &&
	    cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
				     CUDNN_TYPE_BACKEND_DESCRIPTOR, ENGINE_KNOBS_MAX, &n, knobs) ==
		    CUDNN_STATUS_SUCCESS) {
		for (int64_t i = 0; i < n && i < ENGINE_KNOBS_MAX; i++) {
			cudnnBackendKnobType_t type;
			int64_t value = 0, got = 0, got2 = 0;
			if (cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
						     CUDNN_TYPE_KNOB_TYPE, 1, &got, &type) ==
				    CUDNN_STATUS_SUCCESS &&
			    cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
						     CUDNN_TYPE_INT64, 1, &got2, &value) ==
				    CUDNN_STATUS_SUCCESS && got == 1 && got2 == 1) {
				e->knob_type[e->nknobs] = (int64_t)type;
				e->knob_value[e->nknobs++] = value;
			}
		}
	}
	for (int i = 0; i < nknobs; i++)
		(void)cudnnBackendDestroyDescriptor(knobs[i]);
	if (engine)
		(void)cudnnBackendDestroyDescriptor(engine);
}

/* Finalizes an execution plan on cfg; on success it becomes the graph's plan. */
static void try_config(struct builder *b, cudnnBackendDescriptor_t cfg, const char *mode_name,
		       int64_t index, struct attempt *first)
{
	char what[96];
	snprintf(what, sizeof(what), "%s engine config %lld", mode_name, (long long)index);
	cudnnBackendDescriptor_t plan = create(b, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, what);
	SET(b, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &b->handle, what);
	SET_DESC(b, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg, what);
	if (b->status != CUDNN_STATUS_SUCCESS)
		return;
	cudnnStatus_t st = cudnnBackendFinalize(plan);
	if (st != CUDNN_STATUS_SUCCESS) {
		note(first, st, what, "finalize the execution plan");
		discard_last(b, plan);
		return;
	}
	int64_t workspace = 0, got = 0;
	st = cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
				      CUDNN_TYPE_INT64, 1, &got, &workspace);
	if (st != CUDNN_STATUS_SUCCESS) {
		fail_step(b, st, what, "get CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE");
		return;
	}
	b->g->plan = plan;
	b->g->workspace = workspace;
	engine_info(&b->g->engine, cfg);
	b->g->engine.heuristics = strstr(mode_name, "FALLBACK") ? "FALLBACK" : "A";
	b->g->engine.config = index;
}

/* The heuristics of one mode, and its configs in order until one finalizes. A failure of the
 * heuristics themselves is noted and the search goes on to the next mode. */
static void try_mode(struct builder *b, cudnnBackendDescriptor_t graph,
		     cudnnBackendHeurMode_t mode, const char *name, struct attempt *first,
		     int *tried)
{
	cudnnBackendDescriptor_t *cfgs = NULL;
	int64_t count = 0, got = 0;
	cudnnStatus_t st;
	cudnnBackendDescriptor_t heur = create(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, name);
	SET_DESC(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, name);
	SET(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode, name);
	if (b->status != CUDNN_STATUS_SUCCESS)
		goto done;
	st = cudnnBackendFinalize(heur);
	if (st != CUDNN_STATUS_SUCCESS) {
		note(first, st, name, "finalize");
		goto done;
	}
	st = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
				      CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL);
	if (st != CUDNN_STATUS_SUCCESS) {
		note(first, st, name, "count CUDNN_ATTR_ENGINEHEUR_RESULTS");
		goto done;
	}
	if (count <= 0) {
		note(first, CUDNN_STATUS_NOT_SUPPORTED, name, "no engine config");
		goto done;
	}
	cfgs = calloc((size_t)count, sizeof(*cfgs));
	if (!cfgs) {
		fail_step(b, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, name,
			  "out of host memory for the engine configs");
		goto done;
	}
	for (int64_t i = 0; i < count; i++)
		cfgs[i] = create(b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, name);
	if (b->status != CUDNN_STATUS_SUCCESS)
		goto done;
	st = cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
				      CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, cfgs);
	if (st != CUDNN_STATUS_SUCCESS) {
		note(first, st, name, "get CUDNN_ATTR_ENGINEHEUR_RESULTS");
		goto done;
	}
	for (int64_t i = 0; i < got && i < count && !b->g->plan; i++) {
		(*tried)++;
		try_config(b, cfgs[i], name, i, first);
		if (b->status != CUDNN_STATUS_SUCCESS)
			goto done;
	}
done:
	free(cfgs);
}

/* The operation graph of b's ops, then its execution plan. */
static void plan_graph(struct builder *b)
{
	static const struct {
		cudnnBackendHeurMode_t mode;
		const char *name;
	} modes[] = {
		{CUDNN_HEUR_MODE_A, "heuristics mode A"},
		{CUDNN_HEUR_MODE_FALLBACK, "heuristics mode FALLBACK"},
	};
	const char *what = "operation graph";
	cudnnBackendDescriptor_t graph = create(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what);
	SET(b, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &b->handle, what);
	SET(b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, b->nops, b->ops,
	    what);
	finalize(b, graph, what);

	struct attempt first = {0};
	int tried = 0;
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		if (b->status != CUDNN_STATUS_SUCCESS || b->g->plan)
			return;
		try_mode(b, graph, modes[m].mode, modes[m].name, &first, &tried);
	}
	if (b->status != CUDNN_STATUS_SUCCESS || b->g->plan)
		return;
	b->no_engine = 1;
	b->status = first.status ? first.status : CUDNN_STATUS_NOT_SUPPORTED;
	if (tried)
		snprintf(b->step, sizeof(b->step),
			 "no engine config finalized (%d tried, the first at %s)", tried,
			 first.step);
	else
		snprintf(b->step, sizeof(b->step), "no engine config from the heuristics (%s)",
			 first.step[0] ? first.step : "modes A and FALLBACK");
	snprintf(b->msg, sizeof(b->msg), "%s", first.msg[0] ? first.msg : "(no message)");
}

/* ---- plans ----------------------------------------------------------------------------------- */

static void describe(char *out, size_t n, const struct cuda_flash_shape *s)
{
	snprintf(out, n, "%s b=%lld h=%lld t=%lld dh=%lld%s", dtype_name(s->dtype), (long long)s->b,
		 (long long)s->h, (long long)s->t, (long long)s->dh, s->causal ? " causal" : "");
}

/* min(the headers' CUDNN_VERSION, the library's cudnnGetVersion()): what both sides know, as
 * the frontend decides (detail::get_compiled_version / get_backend_version). */
static long effective_version(void)
{
	long runtime = (long)cudnnGetVersion();
	return runtime < CUDNN_VERSION ? runtime : CUDNN_VERSION;
}

/* Which graphs to try (BENCHDB_SDPA_GRAPH): all in order, or only one kind. */
enum graph_choice { CHOOSE_AUTO, CHOOSE_UNIFIED, CHOOSE_COMPOSITE };

/* Why form is not tried for s in this direction, or NULL to try it ("" to pass over it without
 * a note). The unified forms follow the frontend's support surface (node/
 * sdpa_support_surface.h): 16-bit, t > 1 (no decode), cuDNN >= 9.13.1 forward, a causal mask
 * from 9.21 (a subgraph); the backward from 9.27 (the first release whose heuristics propose its
 * engines), without masks before 9.28. The 9.21 forms are the frontend's from 9.21 on. */
static const char *form_refusal(enum graph_form f, const struct cuda_flash_shape *s, int backward,
				long v, enum graph_choice choice)
{
	if (choice == CHOOSE_UNIFIED && !form_is_unified(f))
		return "not tried (BENCHDB_SDPA_GRAPH=unified)";
	if (choice == CHOOSE_COMPOSITE && form_is_unified(f))
		return "not tried (BENCHDB_SDPA_GRAPH=composite)";
	/* passed over silently: a form that is not one of this direction and version */
	if ((f == FORM_UNIFIED_921 || f == FORM_COMPOSITE_921) && v < 92100)
		return "";
	if (backward && (f == FORM_UNIFIED_921 || (f == FORM_COMPOSITE_921 && !s->causal)))
		return "";   /* the same graphs as unified / composite */
	if (!form_is_unified(f))
		return NULL;
	if (s->dtype != DTYPE_FLOAT16 && s->dtype != DTYPE_BFLOAT16)
		return "float16/bfloat16 only";
	if (backward) {
		if (v < 92700)
			return "its engines are proposed by the heuristics from cuDNN 9.27 on (the "
			       "frontend's floor)";
		if (s->causal)
			return "a causal mask needs cuDNN 9.28 on the unified backward (the frontend's "
			       "floor), not built here";
		return NULL;
	}
	if (s->t == 1)
		return "no decode (t = 1) on the unified node";
	if (v < 91301)
		return "needs cuDNN 9.13.1";
	if (s->causal && f == FORM_UNIFIED)
		return v < 92100 ? "a causal mask goes on the unified node only as a score-modifier "
				   "subgraph (cuDNN 9.21)"
				 : "";
	return NULL;
}

static void append(char *buf, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= n)
		return;
	if (len)
		len += (size_t)snprintf(buf + len, n - len, "; ");
	if (len + 1 >= n)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* Builds and plans the first graph of the forms (in enum order) that cuDNN plans for s, into g,
 * with what was passed over or failed before it in g->fallback. 0, or -1 with why (the last
 * failure, and the earlier ones) and *unsupported. */
static int build(struct graph *g, cudnnHandle_t handle, const struct cuda_flash_shape *s,
		 cudnnDataType_t io, int backward, enum graph_choice choice, char *why,
		 size_t why_len, int *unsupported)
{
	char notes[sizeof(g->fallback)] = "", shape[128];
	long v = effective_version();
	struct builder b = {.status = CUDNN_STATUS_NOT_SUPPORTED, .no_engine = 1};
	int tried = 0;
	const char *noted = "";
	for (int f = 0; f < FORM_COUNT; f++) {
		const char *refusal = form_refusal((enum graph_form)f, s, backward, v, choice);
		if (refusal) {
			if (*refusal && strcmp(refusal, noted))
				append(notes, sizeof(notes), "%s: %s", form_names[f], refusal);
			noted = refusal;
			continue;
		}
		graph_free(g);
		b = (struct builder){.handle = handle, .g = g, .next_uid = UID_VIRTUAL,
				     .form = (enum graph_form)f};
		if (backward && form_is_unified(b.form))
			build_bwd_unified(&b, s, io);
		else if (backward)
			build_bwd(&b, s, io);
		else if (form_is_unified(b.form))
			build_fwd_unified(&b, s, io);
		else
			build_fwd(&b, s, io);
		plan_graph(&b);
		tried = 1;
		if (b.status == CUDNN_STATUS_SUCCESS) {
			g->form = b.form;
			snprintf(g->fallback, sizeof(g->fallback), "%s", notes);
			return 0;
		}
		append(notes, sizeof(notes), "%s: %s: %s: %s", form_names[f], b.step,
		       cudnnGetErrorString(b.status), b.msg);
	}
	graph_free(g);
	*unsupported = b.no_engine || CUDNN_STATUS_CATEGORY(b.status) == CUDNN_STATUS_NOT_SUPPORTED;
	describe(shape, sizeof(shape), s);
	say(why, why_len, "cudnn sdpa %s for %s: %s%s", backward ? "backward" : "forward", shape,
	    tried ? "" : "no graph to try: ", notes);
	return -1;
}

static size_t align_up(size_t n)
{
	return (n + WORKSPACE_ALIGN - 1) / WORKSPACE_ALIGN * WORKSPACE_ALIGN;
}

int sdpa_plan_create(struct sdpa_plan **out, struct sdpa_ctx *ctx, const struct cuda_flash_shape *s,
		     int backward, char *why, size_t why_len, int *unsupported)
{
	int rc = -1;
	struct sdpa_plan *p = NULL;
	cudnnDataType_t io;
	*out = NULL;
	*unsupported = 0;
	if (!ctx || !s || s->b <= 0 || s->h <= 0 || s->t <= 0 || s->dh <= 0) {
		say(why, why_len, "cudnn sdpa: bad parameters (%s)",
		    !ctx ? "no ctx" : !s ? "no shape" : "b, h, t and dh must be positive");
		goto done;
	}
	switch (s->dtype) {
	case DTYPE_FLOAT32: io = CUDNN_DATA_FLOAT; break;   /* built anyway: cuDNN says why it refuses it */
	case DTYPE_FLOAT16: io = CUDNN_DATA_HALF; break;
	case DTYPE_BFLOAT16: io = CUDNN_DATA_BFLOAT16; break;
	default:
		say(why, why_len, "cudnn sdpa: bad parameters (dtype %d)", s->dtype);
		goto done;
	}
	const char *env = getenv(SDPA_GRAPH_ENV);
	enum graph_choice choice = CHOOSE_AUTO;
	if (env && *env && strcmp(env, "auto")) {
		if (!strcmp(env, "unified"))
			choice = CHOOSE_UNIFIED;
		else if (!strcmp(env, "composite"))
			choice = CHOOSE_COMPOSITE;
		else {
			say(why, why_len, "cudnn sdpa: %s='%s': want auto, unified or composite",
			    SDPA_GRAPH_ENV, env);
			goto done;
		}
	}
	if (!(p = calloc(1, sizeof(*p)))) {
		say(why, why_len, "cudnn sdpa: out of host memory");
		goto done;
	}
	p->s = *s;
	p->backward = backward != 0;
	p->scale = s->scale;
	p->neg_inf = -INFINITY;  /* get_negative_inf_value(): lowest() only before cuDNN 9.10 */
	p->one = 1.0f;

	if (build(&p->fwd, ctx->handle, s, io, 0, choice, why, why_len, unsupported))
		goto done;
	p->workspace = (size_t)p->fwd.workspace;
	if (p->backward) {
		if (build(&p->bwd, ctx->handle, s, io, 1, choice, why, why_len, unsupported))
			goto done;
		if (!form_is_unified(p->bwd.form)) {   /* its scratch first, then the plan's */
			size_t rows = (size_t)s->b * (size_t)s->h * (size_t)s->t;
			p->softmax_sum_at = align_up(rows * (size_t)s->dh * sizeof(float));
			p->bwd_workspace_at = align_up(p->softmax_sum_at + rows * sizeof(float));
		}
		size_t bwd = p->bwd_workspace_at + (size_t)p->bwd.workspace;
		if (bwd > p->workspace)
			p->workspace = bwd;
	}
	*out = p;
	p = NULL;
	rc = 0;
done:
	sdpa_plan_free(p);
	return rc;
}

size_t sdpa_plan_workspace(const struct sdpa_plan *p)
{
	return p ? p->workspace : 0;
}

void sdpa_plan_free(struct sdpa_plan *p)
{
	if (!p)
		return;
	graph_free(&p->bwd);
	graph_free(&p->fwd);
	free(p);
}

/* ---- execution ------------------------------------------------------------------------------- */

/* Whether g's cached variant pack holds these n pointers and this workspace. */
static int pack_matches(const struct graph *g, int64_t n, void **ptrs, void *workspace)
{
	if (!g->pack || g->pack_n != n || g->pack_ws != workspace)
		return 0;
	for (int64_t i = 0; i < n; i++)
		if (g->pack_ptrs[i] != ptrs[i])
			return 0;
	return 1;
}

/* Enqueues g's plan with a variant pack of n (uid, pointer) pairs and the workspace: the cached
 * pack when it holds the same pointers, else a new one, which is then cached. */
static int execute(struct sdpa_ctx *ctx, struct graph *g, const char *what, int64_t n,
		   const int64_t *uids, void **ptrs, void *workspace, char *why, size_t why_len)
{
	int rc = -1;
	cudnnBackendDescriptor_t pack = NULL;
	const char *step = "cudnnBackendExecute";
	cudnnStatus_t st = CUDNN_STATUS_BAD_PARAM;
	if (n > PACK_MAX) {
		step = "too many tensors for a variant pack";
		goto done;
	}
	if (pack_matches(g, n, ptrs, workspace)) {
		if ((st = cudnnBackendExecute(ctx->handle, g->plan, g->pack)) != CUDNN_STATUS_SUCCESS)
			goto done;
		return 0;
	}
	step = "create the variant pack";
	st = cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
	if (st != CUDNN_STATUS_SUCCESS) {
		pack = NULL;
		goto done;
	}
	step = "set CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS";
	st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
				      uids);
	if (st != CUDNN_STATUS_SUCCESS)
		goto done;
	step = "set CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS";
	st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
				      CUDNN_TYPE_VOID_PTR, n, ptrs);
	if (st != CUDNN_STATUS_SUCCESS)
		goto done;
	step = "set CUDNN_ATTR_VARIANT_PACK_WORKSPACE";
	st = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
				      CUDNN_TYPE_VOID_PTR, 1, &workspace);
	if (st != CUDNN_STATUS_SUCCESS)
		goto done;
	step = "finalize the variant pack";
	if ((st = cudnnBackendFinalize(pack)) != CUDNN_STATUS_SUCCESS)
		goto done;
	step = "cudnnBackendExecute";
	if ((st = cudnnBackendExecute(ctx->handle, g->plan, pack)) != CUDNN_STATUS_SUCCESS)
		goto done;
	if (g->pack)
		(void)cudnnBackendDestroyDescriptor(g->pack);
	g->pack = pack;
	g->pack_n = n;
	memcpy(g->pack_ptrs, ptrs, (size_t)n * sizeof(*ptrs));
	g->pack_ws = workspace;
	pack = NULL;
	rc = 0;
done:
	if (rc) {
		char msg[512];
		last_error(msg, sizeof(msg));
		say(why, why_len, "cudnn sdpa %s: %s: %s: %s", what, step, cudnnGetErrorString(st),
		    msg);
	}
	if (pack)
		(void)cudnnBackendDestroyDescriptor(pack);
	return rc;
}

int sdpa_plan_fwd(struct sdpa_plan *p, struct sdpa_ctx *ctx, const void *q, const void *k,
		  const void *v, void *o, float *lse, void *workspace, char *why, size_t why_len)
{
	if (!p || !ctx || !p->fwd.plan) {
		say(why, why_len, "cudnn sdpa forward: bad parameters (no plan or ctx)");
		return -1;
	}
	if (!workspace && p->fwd.workspace > 0) {
		say(why, why_len, "cudnn sdpa forward: no workspace (%zu bytes needed)",
		    p->workspace);
		return -1;
	}
	int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_SCALE, UID_NEG_INF};
	void *ptrs[] = {(void *)q, (void *)k, (void *)v, o, lse, &p->scale, &p->neg_inf};
	int64_t n = p->s.causal ? 7 : 6;
	return execute(ctx, &p->fwd, "forward", n, uids, ptrs, workspace, why, why_len);
}

int sdpa_plan_bwd(struct sdpa_plan *p, struct sdpa_ctx *ctx, const void *q, const void *k,
		  const void *v, const void *o, const float *lse, const void *d_o, void *dq,
		  void *dk, void *dv, void *workspace, char *why, size_t why_len)
{
	if (!p || !ctx) {
		say(why, why_len, "cudnn sdpa backward: bad parameters (no plan or ctx)");
		return -1;
	}
	if (!p->backward || !p->bwd.plan) {
		say(why, why_len, "cudnn sdpa backward: the plan was made without backward");
		return -1;
	}
	if (!workspace) {
		say(why, why_len, "cudnn sdpa backward: no workspace (%zu bytes needed)",
		    p->workspace);
		return -1;
	}
	char *ws = workspace;
	int64_t uids[] = {UID_Q, UID_K, UID_V, UID_O, UID_STATS, UID_DO, UID_DQ, UID_DK, UID_DV,
			  UID_SCALE, UID_ONE, UID_SOFTMAX_SUM, UID_DQ_ACCUM, UID_NEG_INF};
	void *ptrs[] = {(void *)q, (void *)k, (void *)v, (void *)o, (void *)lse, (void *)d_o,
			dq, dk, dv, &p->scale, &p->one, ws + p->softmax_sum_at, ws,
			&p->neg_inf};
	/* the unified node: the first 10, its scratch in its own workspace */
	int64_t n = form_is_unified(p->bwd.form) ? 10 : p->s.causal ? 14 : 13;
	return execute(ctx, &p->bwd, "backward", n, uids, ptrs, ws + p->bwd_workspace_at, why,
		       why_len);
}

/* ---- what ran -------------------------------------------------------------------------------- */

static const char *numerical_note_name(int note)
{
	switch (note) {
	case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor_core";
	case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down_convert_inputs";
	case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced_precision_reduction";
	case CUDNN_NUMERICAL_NOTE_FFT: return "fft";
	case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
	case CUDNN_NUMERICAL_NOTE_STRICT_NAN_PROP: return "strict_nan_prop";
	default: return NULL;
	}
}

static const char *behavior_note_name(int note)
{
	switch (note) {
	case CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION: return "runtime_compilation";
	case CUDNN_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API: return "supports_cuda_graph_native_api";
	case CUDNN_BEHAVIOR_NOTE_CUBLASLT_DEPENDENCY: return "cublaslt_dependency";
	default: return NULL;
	}
}

static void put_notes(struct strbuf *t, const char *key, const int *notes, int n,
		      const char *(*name)(int))
{
	sb_addf(t, ", \"%s\": [", key);
	for (int i = 0; i < n; i++) {
		const char *nm = name(notes[i]);
		if (nm)
			sb_addf(t, "%s\"%s\"", i ? ", " : "", nm);
		else
			sb_addf(t, "%s%d", i ? ", " : "", notes[i]);
	}
	sb_addc(t, ']');
}

/* {"graph": ..., "engine": ..., ...} of one planned graph. */
static void put_graph(struct strbuf *t, const struct graph *g)
{
	const struct engine_info *e = &g->engine;
	sb_addf(t, "{\"graph\": \"%s\", \"engine\": ", form_names[g->form]);
	if (e->global_index >= 0)
		sb_addf(t, "%lld", (long long)e->global_index);
	else
		sb_add(t, "null");
	sb_addf(t, ", \"heuristics\": \"%s\", \"config\": %lld, \"knobs\": {",
		e->heuristics ? e->heuristics : "?", (long long)e->config);
	for (int i = 0; i < e->nknobs; i++)
		sb_addf(t, "%s\"%lld\": %lld", i ? ", " : "", (long long)e->knob_type[i],
			(long long)e->knob_value[i]);
	sb_addc(t, '}');
	put_notes(t, "numerical_notes", e->numerical, e->nnumerical, numerical_note_name);
	put_notes(t, "behavior_notes", e->behavior, e->nbehavior, behavior_note_name);
	sb_addf(t, ", \"workspace\": %lld", (long long)g->workspace);
	if (g->fallback[0]) {   /* at most 480 bytes each, so that both directions fit */
		char cut[480 + 4];
		snprintf(cut, sizeof(cut), "%.480s%s", g->fallback,
			 strlen(g->fallback) > 480 ? "..." : "");
		sb_add(t, ", \"fallback\": ");
		sb_add_json_str(t, cut);
	}
	sb_addc(t, '}');
}

void sdpa_plan_describe(const struct sdpa_plan *p, char *buf, size_t n)
{
	if (!buf || !n)
		return;
	buf[0] = '\0';
	if (!p)
		return;
	struct strbuf t = STRBUF_INIT;
	char version[32];
	sdpa_cudnn_version(version, sizeof(version));
	sb_addf(&t, "\"cudnn\": \"%s\", \"cudnn_headers\": \"%d.%d.%d\", \"fwd\": ", version,
		CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
	put_graph(&t, &p->fwd);
	if (p->backward && p->bwd.plan) {
		sb_add(&t, ", \"bwd\": ");
		put_graph(&t, &p->bwd);
	}
	/* a description cut short is not JSON: say less rather than something broken */
	if (t.len < n)
		memcpy(buf, sb_str(&t), t.len + 1);
	else
		snprintf(buf, n, "\"cudnn\": \"%s\", \"fwd\": {\"graph\": \"%s\"}", version,
			 form_names[p->fwd.form]);
	sb_free(&t);
}

/* ---- handle ---------------------------------------------------------------------------------- */

int sdpa_ctx_open(struct sdpa_ctx **out, void *cuda_stream, char *why, size_t why_len)
{
	int rc = -1;
	struct sdpa_ctx *ctx = NULL;
	char msg[512];
	cudnnStatus_t st;
	*out = NULL;
	if (!(ctx = calloc(1, sizeof(*ctx)))) {
		say(why, why_len, "cudnn: out of host memory");
		goto done;
	}
	if ((st = cudnnCreate(&ctx->handle)) != CUDNN_STATUS_SUCCESS) {
		ctx->handle = NULL;
		last_error(msg, sizeof(msg));
		say(why, why_len, "cudnn: cudnnCreate: %s: %s", cudnnGetErrorString(st), msg);
		goto done;
	}
	if ((st = cudnnSetStream(ctx->handle, (cudaStream_t)cuda_stream)) != CUDNN_STATUS_SUCCESS) {
		last_error(msg, sizeof(msg));
		say(why, why_len, "cudnn: cudnnSetStream: %s: %s", cudnnGetErrorString(st), msg);
		goto done;
	}
	*out = ctx;
	ctx = NULL;
	rc = 0;
done:
	sdpa_ctx_close(ctx);
	return rc;
}

void sdpa_ctx_close(struct sdpa_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->handle)
		(void)cudnnDestroy(ctx->handle);
	free(ctx);
}

void sdpa_cudnn_version(char *buf, size_t n)
{
	size_t v = cudnnGetVersion();   /* 10000·major + 100·minor + patch (cuDNN 9) */
	if (buf && n)
		snprintf(buf, n, "%zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
}
