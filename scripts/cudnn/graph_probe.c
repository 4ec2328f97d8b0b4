/* scripts/cudnn/graph_probe.c: which of sdpa_cudnn.c's graphs the linked cuDNN accepts node by
 * node, without a GPU: every tensor and operation descriptor of each graph is created, set and
 * finalized (what cuDNN checks before a handle exists). The operation graph, the heuristics and
 * the execution plan need a cuDNN handle, so a GPU; they are not reached here (and the causal
 * unified-9.21 forward, whose mask is an operation graph of its own, stops at that subgraph:
 * "CUDNN_ATTR_OPERATIONGRAPH_HANDLE" is expected to fail there). It includes sdpa_cudnn.c to
 * reach its static builders. Built with the kernels where cuDNN is found (target
 * cudnn_graph_probe, kernels/CMakeLists.txt) and run by ctest (cudnn_graph_probe): exit 0 when
 * every graph's descriptors finalize.
 *
 *   ./build/kernels/cudnn_graph_probe
 *
 * cuDNN 9.28 loads libcuda.so.1 when it finalizes a tensor; on a machine without the driver,
 * LD_LIBRARY_PATH to a folder with libcuda.so.1 -> the toolkit's lib64/stubs/libcuda.so (the
 * ctest does so). */
#include "sdpa_cudnn.c"

typedef void (*builder_fn)(struct builder *, const struct cuda_flash_shape *, cudnnDataType_t);

static int probe(const char *name, builder_fn fn, enum graph_form form, int causal)
{
	struct graph g = {0};
	struct builder b = {.g = &g, .next_uid = UID_VIRTUAL, .form = form};
	struct cuda_flash_shape s = {.b = 2, .h = 4, .t = 256, .dh = 64, .causal = causal,
				     .dtype = DTYPE_BFLOAT16, .scale = 0.125f};
	fn(&b, &s, CUDNN_DATA_BFLOAT16);
	if (b.status != CUDNN_STATUS_SUCCESS && !b.handle && strstr(b.step, "causal subgraph")) {
		printf("%-31s causal=%d: every node up to the subgraph finalized (%s: %s: the "
		       "subgraph needs a handle)\n", name, causal, b.step,
		       cudnnGetErrorString(b.status));
		graph_free(&g);
		return 0;
	}
	if (b.status == CUDNN_STATUS_SUCCESS)
		printf("%-31s causal=%d: every descriptor finalized (%d operations)\n", name, causal,
		       b.nops);
	else
		printf("%-31s causal=%d: %s at %s: %s\n", name, causal,
		       cudnnGetErrorString(b.status), b.step, b.msg);
	graph_free(&g);
	return b.status != CUDNN_STATUS_SUCCESS;
}

int main(void)
{
	int failed = 0;
	printf("cuDNN %zu (headers %d)\n", cudnnGetVersion(), CUDNN_VERSION);
	for (int causal = 0; causal < 2; causal++) {
		if (!causal)   /* causal: the 9.21 form only */
			failed += probe("forward unified", build_fwd_unified, FORM_UNIFIED, causal);
		if (CUDNN_VERSION >= 92100) {
			failed += probe("forward unified-9.21", build_fwd_unified,
					FORM_UNIFIED_921, causal);
			failed += probe("forward composite-9.21", build_fwd,
					FORM_COMPOSITE_921, causal);
		}
		failed += probe("forward composite", build_fwd, FORM_COMPOSITE, causal);
		failed += probe("backward unified", build_bwd_unified, FORM_UNIFIED, causal);
		if (CUDNN_VERSION >= 92100 && causal)
			failed += probe("backward composite-9.21", build_bwd, FORM_COMPOSITE_921,
					causal);
		failed += probe("backward composite", build_bwd, FORM_COMPOSITE, causal);
	}
	return failed != 0;
}
