// tests/flashemu/emu_cublaslt.cpp: the cuBLASLt entry points kernels/cuda/backend_cuda.c calls,
// for the emulated CUDA device (tests only). cublasLtMatmul is a CPU GEMM with float64
// accumulation that honours what the caller described: column-major layouts with their rows,
// columns, leading dimensions, batch counts and strided batch offsets, the transposes of the
// operation descriptor, the data types (float32, bfloat16, float16; TF32 rounds float32 inputs to
// 10 mantissa bits), alpha and beta (C is not read when beta is 0). Every operand's whole extent
// must lie inside one device allocation, batches of D must not overlap, ld >= rows, the layouts
// must agree with each other and with the transposes, the pointers must have the alignment the
// heuristic was asked for, and the workspace must be a device buffer of the size the chosen
// algorithm needs; anything else is CUBLAS_STATUS_INVALID_VALUE (with the reason on stderr), so a
// wrong leading dimension, stride or transpose in a caller fails.
#include <cublasLt.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <set>
#include <vector>

#include "emu_prims.h"   // emu::half_bits

namespace emu {
size_t device_bytes_from(const void *p);
bool stream_valid(cudaStream_t s);
}

namespace {

struct lt_handle { int magic; };
struct lt_desc {
	cublasComputeType_t compute;
	cudaDataType_t scale;
	int32_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
};
struct lt_layout {
	cudaDataType_t type;
	uint64_t rows, cols;
	int64_t ld;
	int32_t batch = 1;
	int64_t stride = 0;
};
struct lt_pref {
	uint64_t workspace = 0;
	uint32_t align[4] = {256, 256, 256, 256};   // A, B, C, D
};

std::set<void *> live;   // every handle and descriptor made and not destroyed

constexpr uint64_t kAlgoMagic = 0xe3a1c0deull;
constexpr size_t kAlgoWorkspace = (size_t)1 << 20;   // what our "algorithm" asks for

template <typename T>
bool valid(T *p) { return p && live.count((void *)p); }

// *out = a new T (the opaque handle type H is a pointer to T's storage)
template <typename T, typename H>
cublasStatus_t make(H *out, T init)
{
	if (!out)
		return CUBLAS_STATUS_INVALID_VALUE;
	T *p = new T(init);
	live.insert(p);
	*out = (H)p;
	return CUBLAS_STATUS_SUCCESS;
}

template <typename T, typename H>
cublasStatus_t destroy(H h)
{
	if (!valid(h))
		return CUBLAS_STATUS_INVALID_VALUE;
	live.erase((void *)h);
	delete (T *)h;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t invalid(const char *why)
{
	fprintf(stderr, "emu cublasLt: %s\n", why);
	return CUBLAS_STATUS_INVALID_VALUE;
}

size_t type_size(cudaDataType_t t)
{
	return t == CUDA_R_32F ? 4 : t == CUDA_R_16BF || t == CUDA_R_16F ? 2 : 0;
}

double load(const unsigned char *base, cudaDataType_t t, int64_t i, bool tf32)
{
	if (t == CUDA_R_32F) {
		float x;
		memcpy(&x, base + 4 * i, 4);
		if (tf32) {   // round to nearest even at 10 mantissa bits
			uint32_t u;
			memcpy(&u, &x, 4);
			if ((u & 0x7f800000u) != 0x7f800000u)
				u = (u + 0xfffu + ((u >> 13) & 1)) & ~0x1fffu;
			memcpy(&x, &u, 4);
		}
		return x;
	}
	uint16_t h;
	memcpy(&h, base + 2 * i, 2);
	return emu::half_bits(h, t == CUDA_R_16BF ? 2 : 1);
}

void store(unsigned char *base, cudaDataType_t t, int64_t i, double v)
{
	float x = (float)v;
	if (t == CUDA_R_32F) {
		memcpy(base + 4 * i, &x, 4);
	} else if (t == CUDA_R_16BF) {
		__nv_bfloat16 b = __float2bfloat16_rn(x);
		memcpy(base + 2 * i, &b, 2);
	} else {
		__half b = __float2half_rn(x);
		memcpy(base + 2 * i, &b, 2);
	}
}

// elements an operand spans from its base (all batches)
int64_t extent(const lt_layout &l)
{
	return (int64_t)(l.batch - 1) * l.stride + ((int64_t)l.cols - 1) * l.ld + (int64_t)l.rows;
}

cublasStatus_t check_operand(const char *name, const void *p, const lt_layout &l, uint32_t align)
{
	char why[256];
	if (l.rows == 0 || l.cols == 0 || l.batch < 1 || l.ld < (int64_t)l.rows || l.stride < 0) {
		snprintf(why, sizeof why, "%s: %llux%llu, ld %lld, batch %d, stride %lld is not a valid "
			 "column-major layout", name, (unsigned long long)l.rows,
			 (unsigned long long)l.cols, (long long)l.ld, l.batch, (long long)l.stride);
		return invalid(why);
	}
	size_t need = (size_t)extent(l) * type_size(l.type);
	size_t have = emu::device_bytes_from(p);
	if (need > have) {
		snprintf(why, sizeof why, "%s at %p spans %zu bytes (%llux%llu, ld %lld, batch %d, stride "
			 "%lld) but its device allocation holds %zu from there", name, p, need,
			 (unsigned long long)l.rows, (unsigned long long)l.cols, (long long)l.ld,
			 l.batch, (long long)l.stride, have);
		return invalid(why);
	}
	if ((uintptr_t)p % align) {
		snprintf(why, sizeof why, "%s at %p is not %u-byte aligned, as the algorithm was chosen "
			 "for", name, p, align);
		return invalid(why);
	}
	return CUBLAS_STATUS_SUCCESS;
}

// m, n, k of D = op(A) op(B) when the layouts agree, else an error
cublasStatus_t shape(const lt_desc &d, const lt_layout &a, const lt_layout &b, const lt_layout &c,
		     const lt_layout &dd, int64_t *m, int64_t *n, int64_t *k)
{
	*m = (int64_t)dd.rows;
	*n = (int64_t)dd.cols;
	int64_t am = d.ta == CUBLAS_OP_N ? a.rows : a.cols, ak = d.ta == CUBLAS_OP_N ? a.cols : a.rows;
	int64_t bk = d.tb == CUBLAS_OP_N ? b.rows : b.cols, bn = d.tb == CUBLAS_OP_N ? b.cols : b.rows;
	*k = ak;
	if (am != *m || bn != *n || bk != ak || c.rows != dd.rows || c.cols != dd.cols)
		return invalid("the layouts of A, B, C, D do not make one GEMM with these transposes");
	if (a.batch != dd.batch || b.batch != dd.batch || c.batch != dd.batch)
		return invalid("batch counts differ between operands");
	if (a.type != b.type || c.type != dd.type)
		return invalid("A and B (or C and D) of different types");
	if (d.ta != CUBLAS_OP_N && d.ta != CUBLAS_OP_T)
		return invalid("transa is neither N nor T");
	if (d.tb != CUBLAS_OP_N && d.tb != CUBLAS_OP_T)
		return invalid("transb is neither N nor T");
	bool f32 = a.type == CUDA_R_32F && dd.type == CUDA_R_32F &&
		   (d.compute == CUBLAS_COMPUTE_32F || d.compute == CUBLAS_COMPUTE_32F_FAST_TF32);
	bool h16 = (a.type == CUDA_R_16BF || a.type == CUDA_R_16F) &&
		   (dd.type == CUDA_R_32F || dd.type == a.type) && d.compute == CUBLAS_COMPUTE_32F;
	if (!(f32 || h16) || d.scale != CUDA_R_32F)
		return CUBLAS_STATUS_NOT_SUPPORTED;
	if (dd.batch > 1 && dd.stride < extent(lt_layout{dd.type, dd.rows, dd.cols, dd.ld, 1, 0}))
		return invalid("batches of D overlap (stride smaller than one matrix)");
	return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h) { return make(h, lt_handle{1}); }

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
	return valid(h) ? destroy<lt_handle>(h) : CUBLAS_STATUS_NOT_INITIALIZED;
}

const char *cublasLtGetStatusString(cublasStatus_t s)
{
	switch (s) {
	case CUBLAS_STATUS_SUCCESS: return "success";
	case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
	case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
	case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
	default: return "an unknown cuBLASLt status";
	}
}

size_t cublasLtGetVersion(void) { return CUBLAS_VERSION; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
					cudaDataType_t scale)
{
	lt_desc d;
	d.compute = compute;
	d.scale = scale;
	return make(desc, d);
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc)
{
	return destroy<lt_desc>(desc);
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
					      cublasLtMatmulDescAttributes_t attr, const void *buf,
					      size_t size)
{
	if (!valid(desc) || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	lt_desc *d = (lt_desc *)desc;
	if (attr == CUBLASLT_MATMUL_DESC_TRANSA || attr == CUBLASLT_MATMUL_DESC_TRANSB) {
		if (size != sizeof(int32_t))
			return invalid("transa/transb take an int32_t");
		memcpy(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &d->ta : &d->tb, buf, 4);
		return CUBLAS_STATUS_SUCCESS;
	}
	return invalid("a matmul descriptor attribute the emulator does not model");
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *out, cudaDataType type,
					  uint64_t rows, uint64_t cols, int64_t ld)
{
	if (!type_size(type))
		return CUBLAS_STATUS_INVALID_VALUE;
	return make(out, lt_layout{type, rows, cols, ld});
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
	return destroy<lt_layout>(l);
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
						cublasLtMatrixLayoutAttribute_t attr,
						const void *buf, size_t size)
{
	if (!valid(layout) || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	lt_layout *l = (lt_layout *)layout;
	if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT) {
		if (size != sizeof(int32_t))
			return invalid("the batch count is an int32_t");
		memcpy(&l->batch, buf, 4);
		return CUBLAS_STATUS_SUCCESS;
	}
	if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) {
		if (size != sizeof(int64_t))
			return invalid("the strided batch offset is an int64_t");
		memcpy(&l->stride, buf, 8);
		return CUBLAS_STATUS_SUCCESS;
	}
	return invalid("a layout attribute the emulator does not model");
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref)
{
	return make(pref, lt_pref{});
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref)
{
	return destroy<lt_pref>(pref);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
						    cublasLtMatmulPreferenceAttributes_t attr,
						    const void *buf, size_t size)
{
	if (!valid(pref) || !buf)
		return CUBLAS_STATUS_INVALID_VALUE;
	lt_pref *p = (lt_pref *)pref;
	switch (attr) {
	case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
		if (size != 8)
			return invalid("the workspace preference is a uint64_t");
		memcpy(&p->workspace, buf, 8);
		return CUBLAS_STATUS_SUCCESS;
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
	case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
		if (size != 4)
			return invalid("alignment preferences are uint32_t");
		int i = attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES ? 0
			: attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES ? 1
			: attr == CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES ? 2 : 3;
		memcpy(&p->align[i], buf, 4);
		return CUBLAS_STATUS_SUCCESS;
	}
	default:
		return invalid("a preference attribute the emulator does not model");
	}
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t desc,
					      cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
					      cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
					      cublasLtMatmulPreference_t pref, int requested,
					      cublasLtMatmulHeuristicResult_t results[],
					      int *returned)
{
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!valid(desc) || !valid(a) || !valid(b) || !valid(c) || !valid(d) || !valid(pref) ||
	    requested < 1 || !results || !returned)
		return CUBLAS_STATUS_INVALID_VALUE;
	int64_t m, n, k;
	cublasStatus_t s = shape(*(lt_desc *)desc, *(lt_layout *)a, *(lt_layout *)b,
				 *(lt_layout *)c, *(lt_layout *)d, &m, &n, &k);
	if (s != CUBLAS_STATUS_SUCCESS)
		return s;
	const lt_pref *p = (const lt_pref *)pref;
	memset(&results[0], 0, sizeof(results[0]));
	uint64_t *algo = (uint64_t *)&results[0].algo;
	algo[0] = kAlgoMagic;
	for (int i = 0; i < 4; i++)
		algo[1 + i] = p->align[i];
	results[0].workspaceSize = p->workspace < kAlgoWorkspace ? p->workspace : kAlgoWorkspace;
	algo[5] = results[0].workspaceSize;
	results[0].state = CUBLAS_STATUS_SUCCESS;
	results[0].wavesCount = 1.0f;
	*returned = 1;
	return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha,
			      const void *A, cublasLtMatrixLayout_t adesc, const void *B,
			      cublasLtMatrixLayout_t bdesc, const void *beta, const void *C,
			      cublasLtMatrixLayout_t cdesc, void *D, cublasLtMatrixLayout_t ddesc,
			      const cublasLtMatmulAlgo_t *algo, void *workspace,
			      size_t workspace_bytes, cudaStream_t stream)
{
	if (!valid(h))
		return CUBLAS_STATUS_NOT_INITIALIZED;
	if (!valid(desc) || !valid(adesc) || !valid(bdesc) || !valid(cdesc) || !valid(ddesc) ||
	    !alpha || !beta || !algo)
		return CUBLAS_STATUS_INVALID_VALUE;
	if (!emu::stream_valid(stream))
		return invalid("an invalid stream");
	const lt_desc &d = *(const lt_desc *)desc;
	const lt_layout &la = *(const lt_layout *)adesc, &lb = *(const lt_layout *)bdesc;
	const lt_layout &lc = *(const lt_layout *)cdesc, &ld = *(const lt_layout *)ddesc;
	int64_t m, n, k;
	cublasStatus_t s = shape(d, la, lb, lc, ld, &m, &n, &k);
	if (s != CUBLAS_STATUS_SUCCESS)
		return s;
	const uint64_t *al = (const uint64_t *)algo;
	if (al[0] != kAlgoMagic)
		return invalid("an algorithm the heuristic did not return");
	if (workspace_bytes < al[5])
		return invalid("less workspace than the chosen algorithm needs");
	if (workspace_bytes && emu::device_bytes_from(workspace) < workspace_bytes)
		return invalid("the workspace is not a device buffer of the size passed");
	float fa, fb;
	memcpy(&fa, alpha, 4);
	memcpy(&fb, beta, 4);
	if ((s = check_operand("A", A, la, (uint32_t)al[1])) ||
	    (s = check_operand("B", B, lb, (uint32_t)al[2])) ||
	    (fb != 0 && (s = check_operand("C", C, lc, (uint32_t)al[3]))) ||
	    (s = check_operand("D", D, ld, (uint32_t)al[4])))
		return s;
	if (C != D && fb != 0) {
		const unsigned char *c0 = (const unsigned char *)C, *d0 = (const unsigned char *)D;
		size_t cb = (size_t)extent(lc) * type_size(lc.type);
		size_t db = (size_t)extent(ld) * type_size(ld.type);
		if (c0 < d0 + db && d0 < c0 + cb)
			return invalid("C and D overlap without being the same matrix");
	}
	if (C == D && (lc.ld != ld.ld || lc.stride != ld.stride || lc.type != ld.type))
		return invalid("in place (C == D) with different layouts");
	const bool tf32 = d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
	const unsigned char *pa = (const unsigned char *)A, *pb = (const unsigned char *)B;
	const unsigned char *pc = (const unsigned char *)C;
	unsigned char *pd = (unsigned char *)D;
	std::vector<double> oa((size_t)(m * k)), ob((size_t)(k * n)), out((size_t)n);
	for (int32_t e = 0; e < ld.batch; e++) {
		// op(A) (m, k) and op(B) (k, n), row-major in float64
		for (int64_t i = 0; i < m; i++)
			for (int64_t kk = 0; kk < k; kk++) {
				int64_t r = d.ta == CUBLAS_OP_N ? i : kk, c = d.ta == CUBLAS_OP_N ? kk : i;
				oa[(size_t)(i * k + kk)] = load(pa, la.type, e * la.stride + c * la.ld + r,
								tf32);
			}
		for (int64_t kk = 0; kk < k; kk++)
			for (int64_t j = 0; j < n; j++) {
				int64_t r = d.tb == CUBLAS_OP_N ? kk : j, c = d.tb == CUBLAS_OP_N ? j : kk;
				ob[(size_t)(kk * n + j)] = load(pb, lb.type, e * lb.stride + c * lb.ld + r,
								tf32);
			}
		for (int64_t i = 0; i < m; i++) {
			std::fill(out.begin(), out.end(), 0.0);
			for (int64_t kk = 0; kk < k; kk++) {
				double x = oa[(size_t)(i * k + kk)];
				const double *row = &ob[(size_t)(kk * n)];
				for (int64_t j = 0; j < n; j++)
					out[(size_t)j] += x * row[j];
			}
			for (int64_t j = 0; j < n; j++) {
				double v = (double)fa * out[(size_t)j];
				if (fb != 0)
					v += (double)fb * load(pc, lc.type, e * lc.stride + j * lc.ld + i,
							       false);
				store(pd, ld.type, e * ld.stride + j * ld.ld + i, v);
			}
		}
	}
	return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
