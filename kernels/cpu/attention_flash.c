/* kernels/cpu/attention_flash.c: tiled attention with online softmax (FlashAttention-2 on a CPU).
 *
 * Forward. Work items are (batch·head, block of FWD_BR query rows), handed to threads
 * dynamically. A thread keeps the K^T of the head it works on packed in its own buffer, tile
 * by tile, so that the keys of one register tile are one contiguous row-major (D, TILE)
 * operand. The keys are taken in steps of PT (several register tiles). For each step and each
 * register block of MR query rows it computes the MR x PT scores tile by tile in registers,
 * masks them (causal, sequence tail), writes them to a small (MR, PT) tile while keeping the
 * row maxima in registers, updates the running max m and sum l, turns the tile into
 * probabilities P and adds P·V to the row block's accumulator, rescaled by 2^(m_old - m_new).
 * Register tiles entirely above the diagonal are skipped. Scores are kept in log2 units
 * (scale·log2 e folded in) so that the softmax is exp2; LSE = (m + log2 l)·ln 2.
 *
 * Backward. Δ = rowsum(dO ⊙ O) first. Work items are (batch·head, chunk c of key tiles): chunk c
 * owns key tiles c, c + C, c + 2C, ... (C = dq_chunks), accumulates their dK and dV in
 * per-thread tiles and adds its dQ contributions into its own partial buffer dq_acc[c], so no
 * two threads ever write the same memory; a last pass sums the C partials into dQ.
 * C = ceil(threads / (B·H)), so the partials are one dQ-sized buffer (S·Dp per head, Dp = D
 * rounded up to the vector width) when there are at least as many heads as threads, and fewer
 * than 2·threads·S·Dp floats in all otherwise. For each (key tile, block of PT queries) the
 * scores are recomputed as S^T = K Q^T, P^T = exp2(S^T - LSE), dP^T = V dO^T,
 * dS^T = P^T ⊙ (dP^T - Δ)·scale, then dV += P^T dO, dK += dS^T Q, dQ += dS K.
 *
 * Steps of PT = 64 columns whatever the vector width: the row max, the rescale of the output
 * rows and the round trips of the dK/dV accumulators are paid once per 64 columns. With
 * AVX-512 a step is one register tile (TILE = 64); with AVX2, four (TILE = 16).
 *
 * Extra memory: per thread, transposed copies of the head being processed (O(S·D)) and tiles;
 * shared, Δ (B·H·S) and the dQ partials. Nothing of size S x S.
 *
 * The tile kernels are written with the vector types of simd.h; an MR x NV block of accumulators
 * stays in registers.
 */
#include "attention_flash.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <omp.h>

#include "simd.h"

/* A register block is MR rows x NV vectors of accumulators, plus NV vectors of B and one
 * broadcast of A: 24 + 4 + 1 of the 32 zmm with AVX-512, 12 + 2 + 1 of the 16 ymm with AVX2. */
#if VL == 16
#define MR 6                  /* rows per register block */
#define NV 4                  /* vectors per register-block row */
#elif VL == 8
#define MR 6
#define NV 2
#else
#define MR 2                  /* 16 xmm registers, 4-float vectors */
#define NV 4
#endif
#define TILE (NV * VL)        /* columns of one register block */
#define PT 64                 /* forward: keys per softmax step; backward: queries per step */
#define FWD_BR (16 * MR)      /* query rows per forward work item */
#define BWD_BC (16 * MR)      /* keys per backward key tile */
_Static_assert(MR <= VL, "fwd_scores keeps one value per row in the lanes of a vector");
_Static_assert(PT % TILE == 0, "a softmax step is whole register tiles");

/* acc[r][v] += Σ_kk A(r, kk) · B[kk][v·VL ...] for r < mr, v < nv, where A(r, kk) is
 * a[r·a_rs + kk·a_cs] and row kk of B starts at b + kk·ldb. */
ALWAYS_INLINE void tile_accumulate(const int mr, const int nv, int64_t kn, const float *a,
				   int64_t a_rs, int64_t a_cs, const float *restrict b, int64_t ldb,
				   vfloat acc[MR][NV])
{
	for (int64_t kk = 0; kk < kn; kk++) {
		vfloat bv[NV];
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			bv[v] = vload(b + kk * ldb + v * VL);
#pragma GCC unroll 8
		for (int r = 0; r < mr; r++) {
			vfloat av = vbroadcast(a[r * a_rs + kk * a_cs]);
#pragma GCC unroll 4
			for (int v = 0; v < nv; v++)
				acc[r][v] += av * bv[v];
		}
	}
}

/* acc = A·B (tile_accumulate from zero). */
ALWAYS_INLINE void tile_product(const int mr, const int nv, int64_t kn, const float *a,
				int64_t a_rs, int64_t a_cs, const float *restrict b, int64_t ldb,
				vfloat acc[MR][NV])
{
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[r][v] = (vfloat){0};
	tile_accumulate(mr, nv, kn, a, a_rs, a_cs, b, ldb, acc);
}

/* C(mr, nv·VL) = C·c_scale[r] (or C when c_scale is NULL) + A·B, A and B as in tile_product;
 * row r of C at c + r·ldc. */
ALWAYS_INLINE void tile_update_t(const int mr, const int nv, int64_t kn, const float *a,
				 int64_t a_rs, int64_t a_cs, const float *restrict b, int64_t ldb,
				 float *restrict c, int64_t ldc, const float *c_scale)
{
	vfloat acc[MR][NV];
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			acc[r][v] = vload(c + r * ldc + v * VL) * (c_scale ? c_scale[r] : 1.0f);
	tile_accumulate(mr, nv, kn, a, a_rs, a_cs, b, ldb, acc);
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
		for (int v = 0; v < nv; v++)
			vstore(c + r * ldc + v * VL, acc[r][v]);
}

#define UPDATE_CASE(R, V)                                                                         \
	case (R) * 8 + (V):                                                                       \
		tile_update_t(R, V, kn, a, a_rs, a_cs, b, ldb, c, ldc, c_scale);                  \
		return;
#if NV == 4
#define UPDATE_ROW(R) UPDATE_CASE(R, 1) UPDATE_CASE(R, 2) UPDATE_CASE(R, 3) UPDATE_CASE(R, 4)
#else
#define UPDATE_ROW(R) UPDATE_CASE(R, 1) UPDATE_CASE(R, 2)
#endif
_Static_assert(NV == 4 || NV == 2, "tile_update1 has a case for each nv <= NV");

/* tile_update_t for one run-time (mr <= MR, nv <= NV). */
static void tile_update1(int mr, int nv, int64_t kn, const float *a, int64_t a_rs, int64_t a_cs,
			 const float *b, int64_t ldb, float *c, int64_t ldc, const float *c_scale)
{
	switch (mr * 8 + nv) {
		UPDATE_ROW(1)
		UPDATE_ROW(2)
#if MR > 2
		UPDATE_ROW(3)
		UPDATE_ROW(4)
		UPDATE_ROW(5)
		UPDATE_ROW(6)
#endif
	}
}

/* C(mr, n) (+)= A(mr, kn)·B(kn, n) for any n that is a multiple of VL, in column chunks of TILE. */
static void tile_update(int mr, int64_t n, int64_t kn, const float *a, int64_t a_rs,
			int64_t a_cs, const float *b, int64_t ldb, float *c, int64_t ldc,
			const float *c_scale)
{
	for (int64_t c0 = 0; c0 < n; c0 += TILE) {
		int nv = n - c0 >= TILE ? NV : (int)((n - c0) / VL);
		tile_update1(mr, nv, kn, a, a_rs, a_cs, b + c0, ldb, c + c0, ldc, c_scale);
	}
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* src(S, D)^T in tiles of TILE columns: tile j is the row-major (D, TILE) block at
 * dst + j·D·TILE, holding src rows j·TILE ... j·TILE + TILE - 1 as columns, zero past S. So
 * the tile of rows starting at s0 (a multiple of TILE) is at dst + s0·D with row stride TILE:
 * one contiguous block, where a (D, S) layout would put its D rows S floats apart (with S a
 * power of two, all in one L1 set). */
static void pack_transposed(const float *src, int64_t S, int64_t D, float *dst)
{
	for (int64_t s0 = 0; s0 < S; s0 += TILE) {
		float *tile = dst + s0 * D;
		int64_t n = S - s0 < TILE ? S - s0 : TILE;
		for (int64_t j = 0; j < n; j++)
			for (int64_t d = 0; d < D; d++)
				tile[d * TILE + j] = src[(s0 + j) * D + d];
		for (int64_t d = 0; d < D; d++)
			for (int64_t j = n; j < TILE; j++)
				tile[d * TILE + j] = 0;
	}
}

/* dst(S, Dp) = src(S, D) with columns D..Dp zero. */
static void pack_padded(const float *src, int64_t S, int64_t D, int64_t Dp, float *dst)
{
	for (int64_t j = 0; j < S; j++) {
		memcpy(dst + j * Dp, src + j * D, (size_t)D * sizeof(float));
		memset(dst + j * Dp + D, 0, (size_t)(Dp - D) * sizeof(float));
	}
}

/* Per-thread buffers, carved out of the thread's share of w->tiles. Sizes in floats. */
struct fwd_tiles {
	float *kt;       /* (S_pad / TILE) tiles (D, TILE): K^T of the current head, pack_transposed */
	float *vp;       /* (S, Dp) V padded to Dp columns; NULL when D == Dp (V used in place) */
	float *o_acc;    /* (FWD_BR, Dp) unnormalised output rows */
	float *m;        /* (FWD_BR) running max, log2 units */
	vfloat *l;       /* (FWD_BR) running sum, one partial per lane */
	float *p;        /* (MR, PT) probabilities of one register block */
};

struct bwd_tiles {
	float *qt, *dot;      /* (S_pad / TILE) tiles (D, TILE): Q^T, dO^T of the current head */
	float *qp, *dop, *kp; /* (S, Dp) padded Q, dO, K; NULL when D == Dp */
	float *pt, *dst;      /* (BWD_BC, PT) P^T and dS^T of one (key tile, query block) */
	float *dk_acc, *dv_acc; /* (BWD_BC, Dp) */
	float *lse2, *delta;  /* (PT) LSE in log2 units and Δ of one query block */
};

/* The next n floats (rounded up to whole vectors) at *offset in base; with base NULL it only
 * counts. */
static float *carve(float *base, size_t *offset, size_t n)
{
	float *p = base ? base + *offset : NULL;
	*offset += (size_t)round_up((int64_t)n, VL);
	return p;
}

/* The forward's tiles of one thread at base into t; the floats they take. With base NULL it
 * only counts (t's pointers are then NULL). */
static size_t fwd_layout(const struct attention_dims *d, float *base, struct fwd_tiles *t)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL), S_pad = round_up(S, TILE);
	size_t at = 0;
	t->kt = carve(base, &at, (size_t)(D * S_pad));
	t->vp = Dp != D ? carve(base, &at, (size_t)(S * Dp)) : NULL;
	t->o_acc = carve(base, &at, (size_t)(FWD_BR * Dp));
	t->m = carve(base, &at, FWD_BR);
	t->l = (vfloat *)carve(base, &at, (size_t)FWD_BR * VL);
	t->p = carve(base, &at, (size_t)MR * PT);
	return at;
}

/* The backward's, as fwd_layout. */
static size_t bwd_layout(const struct attention_dims *d, float *base, struct bwd_tiles *t)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL), S_pad = round_up(S, TILE);
	size_t at = 0;
	t->qt = carve(base, &at, (size_t)(D * S_pad));
	t->dot = carve(base, &at, (size_t)(D * S_pad));
	t->qp = Dp != D ? carve(base, &at, (size_t)(S * Dp)) : NULL;
	t->dop = Dp != D ? carve(base, &at, (size_t)(S * Dp)) : NULL;
	t->kp = Dp != D ? carve(base, &at, (size_t)(S * Dp)) : NULL;
	t->pt = carve(base, &at, (size_t)BWD_BC * PT);
	t->dst = carve(base, &at, (size_t)BWD_BC * PT);
	t->dk_acc = carve(base, &at, (size_t)(BWD_BC * Dp));
	t->dv_acc = carve(base, &at, (size_t)(BWD_BC * Dp));
	t->lse2 = carve(base, &at, PT);
	t->delta = carve(base, &at, PT);
	return at;
}

void attention_flash_plan(struct flash_workspace *w, const struct attention_dims *d,
			  int nthreads, int backward)
{
	int64_t heads = d->batch * d->heads, S = d->seq_len, Dp = round_up(d->head_dim, VL);
	int64_t key_tiles = (S + BWD_BC - 1) / BWD_BC;
	struct fwd_tiles ft;
	struct bwd_tiles bt;
	memset(w, 0, sizeof(*w));
	w->nthreads = nthreads > 0 ? nthreads : 1;
	w->thread_floats = fwd_layout(d, NULL, &ft);
	if (backward) {
		size_t b = bwd_layout(d, NULL, &bt);
		if (b > w->thread_floats)
			w->thread_floats = b;
		int64_t chunks = (w->nthreads + heads - 1) / heads;
		if (chunks > key_tiles)
			chunks = key_tiles;
		w->dq_chunks = (int)(chunks > 0 ? chunks : 1);
		w->dq_floats = (size_t)(w->dq_chunks * heads * S * Dp);
	}
}

/* One register block of forward: mr query rows (q, row stride D) against the key block of PT
 * keys whose K^T tiles start at kt (pack_transposed's layout). Keys k0 + j are valid for
 * k0 + j < klimit and, when causal, k0 + j <= q0 + r. Updates m, l, writes corr (the factor
 * for the old accumulator) and the probabilities p (mr, PT) of keys k0 ... kend - 1, kend =
 * min(klimit, causal ? q0 + mr : klimit); columns of p past kend are not written. */
ALWAYS_INLINE void fwd_scores(const int mr, const float *q, int64_t D, const float *kt, float c,
			      int64_t q0, int64_t k0, int64_t klimit, int causal, float *m,
			      vfloat *l, float *corr, float *p)
{
	int64_t kend = causal && q0 + mr < klimit ? q0 + mr : klimit;
	int nt = (int)((kend - k0 + TILE - 1) / TILE);
	vfloat mx[MR];
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++)
		mx[r] = vbroadcast(-INFINITY);
	/* scores of each register tile, scaled and masked, to p; their running row max in mx */
	for (int jt = 0; jt < nt; jt++) {
		int64_t kj = k0 + jt * TILE;
		vfloat s[MR][NV];
		tile_product(mr, NV, D, q, D, 1, kt + jt * TILE * D, TILE, s);
		int masked = kj + TILE > klimit || (causal && kj + TILE - 1 > q0);
#pragma GCC unroll 8
		for (int r = 0; r < mr; r++) {
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				s[r][v] *= c;
			if (masked) {
				int64_t last = klimit - 1;
				if (causal && q0 + r < last)
					last = q0 + r;
				vint lim = (vint){0} + (int32_t)(last - kj);
#pragma GCC unroll 4
				for (int v = 0; v < NV; v++)
					s[r][v] = vselect(viota() + v * VL > lim, vbroadcast(-INFINITY),
							  s[r][v]);
			}
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++) {
				mx[r] = vmax(mx[r], s[r][v]);
				vstore(p + r * PT + jt * TILE + v * VL, s[r][v]);
			}
		}
	}
	/* new running max per row; the corrections 2^(m_old - m_new) of all rows in one vexp2 (a
	 * libm call here would spill every accumulator) */
	vfloat m_old = vbroadcast(0.0f), m_new = vbroadcast(0.0f);
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++) {
		float row_max = hmax(mx[r]);
		m_old[r] = m[r];
		m_new[r] = row_max > m[r] ? row_max : m[r];
	}
	vfloat corr_v = vexp2(m_old - m_new);   /* m_old = -inf on the first block: 0 */
	int64_t ncols = (int64_t)nt * TILE;
#pragma GCC unroll 8
	for (int r = 0; r < mr; r++) {
		vfloat row_m = vbroadcast(m_new[r]);
		vfloat sum = {0};
		float *pr = p + r * PT;
		for (int64_t j = 0; j < ncols; j += VL) {
			vfloat e = vexp2(vload(pr + j) - row_m);
			sum += e;
			vstore(pr + j, e);
		}
		m[r] = m_new[r];
		corr[r] = corr_v[r];
		l[r] = l[r] * corr_v[r] + sum;
	}
}

#define FWD_CASE(R)                                                                               \
	case R:                                                                                   \
		fwd_scores(R, q, D, kt, c, q0, k0, klimit, causal, m, l, corr, p);                \
		return;

static void fwd_scores1(int mr, const float *q, int64_t D, const float *kt, float c, int64_t q0,
			int64_t k0, int64_t klimit, int causal, float *m, vfloat *l, float *corr,
			float *p)
{
	switch (mr) {
		FWD_CASE(1)
		FWD_CASE(2)
#if MR > 2
		FWD_CASE(3)
		FWD_CASE(4)
		FWD_CASE(5)
		FWD_CASE(6)
#endif
	}
}

/* Forward of query rows [q_begin, q_end) of one head; t holds that head's packed K^T (and V). */
static void fwd_rows(const struct attention_dims *d, const struct fwd_tiles *t, const float *q,
		     const float *v, int64_t q_begin, int64_t q_end, float *o, float *lse)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL);
	float c = LOG2E / sqrtf((float)D);
	const float *vb = t->vp ? t->vp : v;      /* (S, Dp or D) */
	int64_t ldv = t->vp ? Dp : D;
	int64_t rows = q_end - q_begin;
	memset(t->o_acc, 0, (size_t)(rows * Dp) * sizeof(float));
	for (int64_t r = 0; r < rows; r++) {
		t->m[r] = -INFINITY;
		t->l[r] = (vfloat){0};
	}
	int64_t key_end = d->causal ? q_end : S;
	for (int64_t k0 = 0; k0 < key_end; k0 += PT) {
		int64_t kvalid = S - k0 < PT ? S - k0 : PT;
		for (int64_t r0 = q_begin; r0 < q_end; r0 += MR) {
			int mr = (int)(q_end - r0 < MR ? q_end - r0 : MR);
			if (d->causal && k0 > r0 + mr - 1)
				continue;        /* every key of the tile is after every row */
			int64_t i = r0 - q_begin;
			float corr[MR];
			fwd_scores1(mr, q + r0 * D, D, t->kt + k0 * D, c, r0, k0, k0 + kvalid,
				    d->causal, t->m + i, t->l + i, corr, t->p);
			int64_t kn = kvalid;
			if (d->causal && r0 + mr - k0 < kn)
				kn = r0 + mr - k0;  /* later keys have p = 0 for all mr rows */
			tile_update(mr, Dp, kn, t->p, PT, 1, vb + k0 * ldv, ldv,
				    t->o_acc + i * Dp, Dp, corr);
		}
	}
	for (int64_t r = 0; r < rows; r++) {
		float l = hsum(t->l[r]);
		float inv = 1.0f / l;
		for (int64_t j = 0; j < D; j++)
			o[(q_begin + r) * D + j] = t->o_acc[r * Dp + j] * inv;
		lse[q_begin + r] = (t->m[r] + log2f(l)) * LN2;
	}
}

void attention_flash_forward(const struct attention_dims *d, struct flash_workspace *w,
			     const float *q, const float *k, const float *v, float *o, float *lse)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL);
	int64_t heads = d->batch * d->heads, blocks = (S + FWD_BR - 1) / FWD_BR;
	int64_t items = heads * blocks;

#pragma omp parallel num_threads(w->nthreads)
	{
		struct fwd_tiles t;
		fwd_layout(d, w->tiles + (size_t)omp_get_thread_num() * w->thread_floats, &t);
		int64_t packed = -1;      /* head whose K^T (and V) t holds */
#pragma omp for schedule(dynamic, 1)
		for (int64_t item = 0; item < items; item++) {
			int64_t h = item / blocks, blk = item % blocks;
			if (d->causal)
				blk = blocks - 1 - blk;   /* longest rows first */
			if (h != packed) {
				pack_transposed(k + h * S * D, S, D, t.kt);
				if (t.vp)
					pack_padded(v + h * S * D, S, D, Dp, t.vp);
				packed = h;
			}
			int64_t q_begin = blk * FWD_BR;
			int64_t q_end = q_begin + FWD_BR < S ? q_begin + FWD_BR : S;
			fwd_rows(d, &t, q + h * S * D, v + h * S * D, q_begin, q_end, o + h * S * D,
				 lse + h * S);
		}
	}
}

/* One register block of backward: mr key rows (k and v, row stride D) against the nt register
 * tiles of one query block whose Q^T and dO^T tiles start at qt and dot (pack_transposed's
 * layout). Writes P^T and dS^T·scale rows (mr, PT), columns 0 ... nt·TILE - 1, to pt and dst.
 * lse2 and delta are the block's (PT) values, +inf and 0 past the sequence end. */
ALWAYS_INLINE void bwd_block(const int mr, const float *k, const float *v, int64_t D,
			     const float *qt, const float *dot, int nt, float c, float scale,
			     const float *lse2, const float *delta, int64_t k0, int64_t i0,
			     int causal, float *pt, float *dst)
{
	for (int jt = 0; jt < nt; jt++) {
		int64_t ij = i0 + jt * TILE;      /* first query of the register tile */
		const float *lse2_j = lse2 + jt * TILE, *delta_j = delta + jt * TILE;
		float *pt_j = pt + jt * TILE, *dst_j = dst + jt * TILE;
		vfloat acc[MR][NV];
		tile_product(mr, NV, D, k, D, 1, qt + jt * TILE * D, TILE, acc);
		int masked = causal && ij < k0 + mr - 1;
#pragma GCC unroll 8
		for (int r = 0; r < mr; r++) {
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++) {
				vfloat p = vexp2(acc[r][v] * c - vload(lse2_j + v * VL));
				if (masked) {     /* query ij + lane < key k0 + r: p = 0 */
					vint key = (vint){0} + (int32_t)(k0 + r - ij);
					p = vselect(viota() + v * VL < key, (vfloat){0}, p);
				}
				vstore(pt_j + r * PT + v * VL, p);
			}
		}
		tile_product(mr, NV, D, v, D, 1, dot + jt * TILE * D, TILE, acc);
#pragma GCC unroll 8
		for (int r = 0; r < mr; r++)
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++) {
				vfloat p = vload(pt_j + r * PT + v * VL);
				vstore(dst_j + r * PT + v * VL,
				       p * (acc[r][v] - vload(delta_j + v * VL)) * scale);
			}
	}
}

#define BWD_CASE(R)                                                                               \
	case R:                                                                                   \
		bwd_block(R, k, v, D, qt, dot, nt, c, scale, lse2, delta, k0, i0, causal, pt,      \
			  dst);                                                                   \
		return;

static void bwd_block1(int mr, const float *k, const float *v, int64_t D, const float *qt,
		       const float *dot, int nt, float c, float scale, const float *lse2,
		       const float *delta, int64_t k0, int64_t i0, int causal, float *pt, float *dst)
{
	switch (mr) {
		BWD_CASE(1)
		BWD_CASE(2)
#if MR > 2
		BWD_CASE(3)
		BWD_CASE(4)
		BWD_CASE(5)
		BWD_CASE(6)
#endif
	}
}

/* Pointers into one head's tensors (S, D) and the thread's packed copies of them. */
struct bwd_head {
	const float *q, *k, *v, *d_o, *lse, *delta;
	const float *qb, *dob, *kb;   /* row-major operands with ldb columns: padded or in place */
	int64_t ldb;
	float *dq_acc;                /* (S, Dp) this chunk's dQ partial for the head */
	float *dk, *dv;
};

/* dK, dV of keys [k0, k0 + kn) of one head, and their dQ contributions. */
static void bwd_key_tile(const struct attention_dims *d, const struct bwd_tiles *t,
			 const struct bwd_head *hd, int64_t k0, int64_t kn)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL);
	float scale = 1.0f / sqrtf((float)D), c = scale * LOG2E;
	int64_t ldb = hd->ldb;
	memset(t->dk_acc, 0, (size_t)(kn * Dp) * sizeof(float));
	memset(t->dv_acc, 0, (size_t)(kn * Dp) * sizeof(float));
	/* query blocks of PT from the register tile holding query k0 when causal (earlier
	 * queries see none of these keys) */
	int64_t i_first = d->causal ? k0 / TILE * TILE : 0;
	for (int64_t i0 = i_first; i0 < S; i0 += PT) {
		int64_t qn = S - i0 < PT ? S - i0 : PT;
		int nt = (int)((qn + TILE - 1) / TILE);
		for (int64_t j = 0; j < nt * TILE; j++) {
			t->lse2[j] = j < qn ? hd->lse[i0 + j] * LOG2E : INFINITY;
			t->delta[j] = j < qn ? hd->delta[i0 + j] : 0.0f;
		}
		/* keys at or after i0 + qn see none of this block's queries when causal */
		int64_t kn_eff = kn;
		if (d->causal && i0 + qn - k0 < kn_eff)
			kn_eff = i0 + qn - k0;
		for (int64_t r = 0; r < kn_eff; r += MR) {
			int mr = (int)(kn - r < MR ? kn - r : MR);
			bwd_block1(mr, hd->k + (k0 + r) * D, hd->v + (k0 + r) * D, D, t->qt + i0 * D,
				   t->dot + i0 * D, nt, c, scale, t->lse2, t->delta, k0 + r, i0,
				   d->causal, t->pt + r * PT, t->dst + r * PT);
			/* dV += P^T dO, dK += dS^T Q over the block's qn queries */
			tile_update(mr, Dp, qn, t->pt + r * PT, PT, 1, hd->dob + i0 * ldb, ldb,
				    t->dv_acc + r * Dp, Dp, NULL);
			tile_update(mr, Dp, qn, t->dst + r * PT, PT, 1, hd->qb + i0 * ldb, ldb,
				    t->dk_acc + r * Dp, Dp, NULL);
		}
		/* dQ += dS K: query rows of the block, keys [k0, k0 + kn_eff) (rows of pt/dst
		 * beyond kn_eff were not written for this block) */
		int64_t keys = kn_eff < kn ? (kn_eff + MR - 1) / MR * MR : kn;
		if (keys > kn)
			keys = kn;
		for (int64_t r = 0; r < qn; r += MR) {
			int mr = (int)(qn - r < MR ? qn - r : MR);
			tile_update(mr, Dp, keys, t->dst + r, 1, PT, hd->kb + k0 * ldb, ldb,
				    hd->dq_acc + (i0 + r) * Dp, Dp, NULL);
		}
	}
	for (int64_t r = 0; r < kn; r++) {
		memcpy(hd->dk + (k0 + r) * D, t->dk_acc + r * Dp, (size_t)D * sizeof(float));
		memcpy(hd->dv + (k0 + r) * D, t->dv_acc + r * Dp, (size_t)D * sizeof(float));
	}
}

void attention_flash_backward(const struct attention_dims *d, struct flash_workspace *w,
			      const float *q, const float *k, const float *v, const float *o,
			      const float *lse, const float *d_o, float *dq, float *dk, float *dv)
{
	int64_t S = d->seq_len, D = d->head_dim, Dp = round_up(D, VL);
	int64_t heads = d->batch * d->heads, rows = heads * S;
	int64_t chunks = w->dq_chunks, key_tiles = (S + BWD_BC - 1) / BWD_BC;
	int64_t items = heads * chunks;
	size_t head_acc = (size_t)(S * Dp);

#pragma omp parallel num_threads(w->nthreads)
	{
#pragma omp for schedule(static)
		for (int64_t i = 0; i < rows; i++) {
			float s = 0;
			for (int64_t j = 0; j < D; j++)
				s += d_o[i * D + j] * o[i * D + j];
			w->delta[i] = s;
		}
#pragma omp for schedule(static)
		for (int64_t i = 0; i < (int64_t)chunks * heads; i++)
			memset(w->dq_acc + (size_t)i * head_acc, 0, head_acc * sizeof(float));

		struct bwd_tiles t;
		bwd_layout(d, w->tiles + (size_t)omp_get_thread_num() * w->thread_floats, &t);
		int64_t packed = -1;
#pragma omp for schedule(dynamic, 1)
		for (int64_t item = 0; item < items; item++) {
			int64_t h = item / chunks, chunk = item % chunks;
			size_t off = (size_t)(h * S * D);
			struct bwd_head hd = {
				.q = q + off, .k = k + off, .v = v + off, .d_o = d_o + off,
				.lse = lse + h * S, .delta = w->delta + h * S,
				.dq_acc = w->dq_acc + (size_t)(chunk * heads + h) * head_acc,
				.dk = dk + off, .dv = dv + off,
			};
			if (h != packed) {
				pack_transposed(hd.q, S, D, t.qt);
				pack_transposed(hd.d_o, S, D, t.dot);
				if (t.qp) {
					pack_padded(hd.q, S, D, Dp, t.qp);
					pack_padded(hd.d_o, S, D, Dp, t.dop);
					pack_padded(hd.k, S, D, Dp, t.kp);
				}
				packed = h;
			}
			hd.qb = t.qp ? t.qp : hd.q;
			hd.dob = t.dop ? t.dop : hd.d_o;
			hd.kb = t.kp ? t.kp : hd.k;
			hd.ldb = t.qp ? Dp : D;
			for (int64_t kt = chunk; kt < key_tiles; kt += chunks) {
				int64_t k0 = kt * BWD_BC;
				int64_t kn = S - k0 < BWD_BC ? S - k0 : BWD_BC;
				bwd_key_tile(d, &t, &hd, k0, kn);
			}
		}

		/* dQ = Σ over chunks of the partials */
#pragma omp for schedule(static)
		for (int64_t i = 0; i < rows; i++) {
			int64_t h = i / S, s = i % S;
			float *out = dq + i * D;
			const float *acc = w->dq_acc + (size_t)h * head_acc + (size_t)(s * Dp);
			memcpy(out, acc, (size_t)D * sizeof(float));
			for (int64_t c = 1; c < chunks; c++) {
				const float *part = acc + (size_t)(c * heads) * head_acc;
				for (int64_t j = 0; j < D; j++)
					out[j] += part[j];
			}
		}
	}
}
