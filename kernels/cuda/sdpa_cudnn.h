/* kernels/cuda/sdpa_cudnn.h: scaled-dot-product attention, forward and backward, through the
 * cuDNN 9 backend (graph) API from plain C; the "cudnn" variant next to our own flash kernel.
 *
 * The graphs are the ones NVIDIA's cudnn-frontend builds for bfloat16/float16 on the linked
 * cuDNN (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h): the single
 * CUDNN_BACKEND_OPERATION_SDPA_FWD node (UnifiedSDPANode) for a forward from cuDNN 9.13.1
 * (causal from 9.21: the mask as a score-modifier subgraph), the single SDPA_BWD node
 * (UnifiedSDPABackwardNode) for a non-causal backward from 9.27 (a causal one needs 9.28's
 * subgraph, not built here), and the composite graphs (CompositeSDPANode /
 * CompositeSDPABackwardNode with the softmax of node/softmax.h and causal_mask() of
 * utils/attn_score_modifiers.h; from 9.21 with its single softmax and band-mask nodes)
 * otherwise: below those versions, for a causal backward, and when the unified node gets no
 * engine. sdpa_cudnn.c lists every node; sdpa_plan_describe says which ran.
 *
 * Layout: q, k, v, o, d_o, dq, dk, dv are contiguous (b, h, t, dh) of the shape's dtype; lse is
 * (b, h, t) float32, the natural-log log-sum-exp of the scaled scores over the visible keys.
 * Lifetimes: a plan holds cuDNN descriptors made with its ctx's handle; free every plan of a
 * ctx before closing it. Nothing here is thread-safe; one ctx per thread.
 */
#ifndef BENCHDB_SDPA_CUDNN_H
#define BENCHDB_SDPA_CUDNN_H

#include <stddef.h>

struct cuda_flash_shape;   /* flash.h */

struct sdpa_ctx;    /* a cuDNN handle bound to a stream */
struct sdpa_plan;   /* the built forward (and backward) execution plans of one shape */

/* Open a cuDNN handle on stream (a cudaStream_t; NULL is the legacy default stream). 0, or -1
 * with why (cuDNN's status name and message). */
int sdpa_ctx_open(struct sdpa_ctx **out, void *cuda_stream, char *why, size_t why_len);
void sdpa_ctx_close(struct sdpa_ctx *ctx);   /* accepts NULL */

/* Build the graphs, run the heuristics and finalize a plan for the forward, and the backward
 * when backward != 0: slow (ms to s), done once per shape outside any timing. Returns 0; or -1
 * with why (the step that failed, the shape, cuDNN's status and cudnnGetLastErrorString()) and
 * *unsupported = 1 when cuDNN refuses the shape/dtype/GPU (a NOT_SUPPORTED status, no engine
 * config from the heuristics, or every candidate config failing to finalize; float32 is
 * expected to land here), *unsupported = 0 for other failures (out of memory, bad param).
 * Each direction tries its graphs in order (unified, then composite) and keeps the first that
 * plans; BENCHDB_SDPA_GRAPH=unified or composite keeps to one kind (auto: both). */
int sdpa_plan_create(struct sdpa_plan **out, struct sdpa_ctx *ctx, const struct cuda_flash_shape *s,
		     int backward, char *why, size_t why_len, int *unsupported);

/* Device workspace bytes the plan's execution needs (the max of forward and backward; the
 * backward's includes its float32 dQ accumulator and softmax-sum scratch). The caller
 * allocates it (256-byte aligned, as cudaMalloc gives) and passes it to every call. */
size_t sdpa_plan_workspace(const struct sdpa_plan *p);

/* Enqueue the forward on the ctx's stream: o = softmax(scale · q kᵀ, causal-masked) v and lse
 * (see above). 0, or -1 with why. */
int sdpa_plan_fwd(struct sdpa_plan *p, struct sdpa_ctx *ctx, const void *q, const void *k,
		  const void *v, void *o, float *lse, void *workspace, char *why, size_t why_len);

/* Enqueue the backward: dq, dk, dv overwritten, from q, k, v, o, lse of the forward, and d_o.
 * -1 with why if the plan was made without backward. */
int sdpa_plan_bwd(struct sdpa_plan *p, struct sdpa_ctx *ctx, const void *q, const void *k,
		  const void *v, const void *o, const float *lse, const void *d_o, void *dq,
		  void *dk, void *dv, void *workspace, char *why, size_t why_len);

void sdpa_plan_free(struct sdpa_plan *p);   /* accepts NULL */

/* What p runs, as the members of a JSON object without its braces (workload.h describe):
 * "cudnn" (the library's version), "cudnn_headers" (the version compiled against), and "fwd"
 * (and "bwd" with a backward) = {"graph": "unified-9.21" | "unified" | "composite-9.21" |
 * "composite" (the -9.21 forms use the single softmax and band-mask nodes of cuDNN 9.21), "engine": the engine's global index (null when cuDNN
 * does not say), "heuristics": "A" | "FALLBACK" and "config": the engine config's place in that
 * mode's list, "knobs": {cudnnBackendKnobType_t number: value}, "numerical_notes",
 * "behavior_notes", "workspace": bytes, "fallback": the graphs passed over or failed before
 * this one and why (absent when it was the first)}. "" for NULL. */
void sdpa_plan_describe(const struct sdpa_plan *p, char *buf, size_t n);

/* "9.19.0" style version of the linked cuDNN, into buf. */
void sdpa_cudnn_version(char *buf, size_t n);

#endif
