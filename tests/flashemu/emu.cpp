// CPU check of flash.cu: runs the file's own kernel section (extract.sh) on emulated warps
// (emu_prims.h) and compares O, LSE, dQ, dK, dV with a float64 reference on the same inputs.
// usage: emu [filter]   — runs the case list, prints one line per case, exits 1 on any failure.
#include "emu_prims.h"

#include "flash.h"

namespace {
#include "kernels_extracted.inc"
}

#include <string>

namespace {

enum { F32 = 0, F16 = 1, BF16 = 2 };

size_t esize(int dtype) { return dtype == F32 ? 4 : 2; }

// Buffer that ends at a PROT_NONE page (and starts after one), so reads or writes past either
// end fault.
struct gbuf {
	unsigned char *p = nullptr;
	size_t bytes = 0;
	unsigned char *map = nullptr;
	size_t map_bytes = 0;
	void alloc(size_t n, bool align16_end)
	{
		size_t pg = 4096, body = (n + pg - 1) / pg * pg + pg;
		map_bytes = body + 2 * pg;
		map = (unsigned char *)mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		mprotect(map, pg, PROT_NONE);
		mprotect(map + pg + body, pg, PROT_NONE);
		size_t start = pg + body - n;
		if (align16_end)
			start &= ~(size_t)15;   // (only moves when n % 16 != 0)
		p = map + start;
		bytes = n;
		memset(p, 0xff, n);   // NaN in every dtype
		emu::globals.push_back({p, p + n});
	}
	~gbuf()
	{
		if (map)
			munmap(map, map_bytes);
	}
};


void put(gbuf &b, int dtype, size_t i, float x)
{
	if (dtype == F32) {
		memcpy(b.p + 4 * i, &x, 4);
	} else if (dtype == F16) {
		__half h = __float2half_rn(x);
		memcpy(b.p + 2 * i, &h, 2);
	} else {
		__nv_bfloat16 h = __float2bfloat16_rn(x);
		memcpy(b.p + 2 * i, &h, 2);
	}
}

double get(const gbuf &b, int dtype, size_t i)
{
	if (dtype == F32) {
		float x;
		memcpy(&x, b.p + 4 * i, 4);
		return x;
	}
	uint16_t h;
	memcpy(&h, b.p + 2 * i, 2);
	return emu::half_bits(h, dtype);
}

struct test_case {
	int dtype, dh;
	int64_t t;
	int causal, vec, bh, copy_at_issue;
	float amp;   // q, k drawn from ±amp: larger = peakier softmax
};

// The launchers' logic (flash.cu, "launchers"), with emu::launch for <<<>>>.
template <typename T, int D>
void fwd_launch(const cuda_flash_shape &s, gbuf &q, gbuf &k, gbuf &v, gbuf &o, gbuf &lse, int vec)
{
	if constexpr (sizeof(T) == 2) {
		using cfg = fwd_mma_cfg<D>;
		flash_params p = make_params(&s, cfg::BM, vec);
		emu::launch((unsigned)(p.nblk * p.bh), cfg::THREADS, cfg::SMEM, [&] {
			flash_fwd_mma<T, D>((const T *)q.p, (const T *)k.p, (const T *)v.p, (T *)o.p,
					    (float *)lse.p, p);
		});
	} else {
		using cfg = fwd_f32_cfg<D>;
		flash_params p = make_params(&s, cfg::BM, 0);
		emu::launch((unsigned)(p.nblk * p.bh), cfg::THREADS, cfg::SMEM, [&] {
			flash_fwd_f32<D>((const float *)q.p, (const float *)k.p, (const float *)v.p,
					 (float *)o.p, (float *)lse.p, p);
		});
	}
}

template <typename T, int D>
void bwd_launch(const cuda_flash_shape &s, gbuf &q, gbuf &k, gbuf &v, gbuf &o, gbuf &lse,
		gbuf &d_o, gbuf &dq, gbuf &dk, gbuf &dv, gbuf &delta, gbuf &dq_acc, int vec)
{
	int64_t rows = s.b * s.h * s.t, count = rows * s.dh;
	memset(dq_acc.p, 0, (size_t)count * 4);
	emu::launch(2, 256, 0, [&] {   // few blocks: exercises the grid-stride loop
		flash_bwd_delta<T>((const T *)o.p, (const T *)d_o.p, (const float *)lse.p,
				   (float2 *)delta.p, rows, (int)s.dh);
	});
	if constexpr (sizeof(T) == 2) {
		using cfg = bwd_mma_cfg<D>;
		flash_params p = make_params(&s, cfg::BN, vec);
		emu::launch((unsigned)(p.nblk * p.bh), cfg::THREADS, cfg::SMEM, [&] {
			flash_bwd_mma<T, D>((const T *)q.p, (const T *)k.p, (const T *)v.p,
					    (const T *)d_o.p, (const float2 *)delta.p,
					    (float *)dq_acc.p, (T *)dk.p, (T *)dv.p, p);
		});
	} else {
		using cfg = bwd_f32_cfg<D>;
		flash_params p = make_params(&s, cfg::BN, 0);
		emu::launch((unsigned)(p.nblk * p.bh), cfg::THREADS, cfg::SMEM, [&] {
			flash_bwd_f32<D>((const float *)q.p, (const float *)k.p, (const float *)v.p,
					 (const float *)d_o.p, (const float *)lse.p,
					 (const float2 *)delta.p, (float *)dq_acc.p, (float *)dk.p,
					 (float *)dv.p, p);
		});
	}
	emu::launch(3, 64, 0, [&] {
		flash_bwd_dq_convert<T>((const float *)dq_acc.p, (T *)dq.p, count);
	});
}

template <typename T>
void run_typed(const cuda_flash_shape &s, gbuf *b, int vec, bool bwd)
{
	// b: q k v o lse d_o dq dk dv delta dq_acc
	if (!bwd) {
		if (s.dh <= 32)
			fwd_launch<T, 32>(s, b[0], b[1], b[2], b[3], b[4], vec);
		else if (s.dh <= 64)
			fwd_launch<T, 64>(s, b[0], b[1], b[2], b[3], b[4], vec);
		else
			fwd_launch<T, 128>(s, b[0], b[1], b[2], b[3], b[4], vec);
	} else {
		if (s.dh <= 32)
			bwd_launch<T, 32>(s, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
					  b[9], b[10], vec);
		else if (s.dh <= 64)
			bwd_launch<T, 64>(s, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
					  b[9], b[10], vec);
		else
			bwd_launch<T, 128>(s, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8],
					   b[9], b[10], vec);
	}
}

struct errs {
	double o, lse, dq, dk, dv;
};

// max |x − r| / max |r| over a tensor; NaN (an element never written) poisons it.
struct err_acc {
	double num = 0, den = 0;
	bool nan = false;
	void add(double x, double r)
	{
		if (!std::isfinite(x))
			nan = true;
		num = std::max(num, fabs(x - r));
		den = std::max(den, fabs(r));
	}
	double value() const { return nan ? INFINITY : num / (den > 0 ? den : 1); }
};

errs run_case(const test_case &c)
{
	cuda_flash_shape s;
	s.b = 1;
	s.h = c.bh;
	s.t = c.t;
	s.dh = c.dh;
	s.causal = c.causal;
	s.dtype = c.dtype;
	s.scale = 1.0f / sqrtf((float)c.dh);
	emu::copy_at_issue = c.copy_at_issue;
	emu::globals.clear();
	const int64_t n = s.b * s.h * s.t * s.dh, rows = s.b * s.h * s.t;
	const size_t es = esize(c.dtype);
	gbuf b[11];
	for (int i = 0; i < 11; i++) {
		bool f32buf = i == 4 || i >= 9;
		// delta (9): the row statistics, float2 {LSE·log2(e), Delta} per row
		b[i].alloc(i == 9 ? (size_t)rows * 8
				  : (size_t)(i == 4 ? rows : n) * (f32buf ? 4 : es), true);
	}
	std::mt19937 r((unsigned)(c.dh * 1000003 + c.t * 101 + c.dtype * 7 + c.causal));
	std::uniform_real_distribution<float> u(-1.0f, 1.0f);
	for (int64_t i = 0; i < n; i++) {
		put(b[0], c.dtype, i, c.amp * u(r));
		put(b[1], c.dtype, i, c.amp * u(r));
		put(b[2], c.dtype, i, u(r));
		put(b[5], c.dtype, i, u(r));
	}

	if (c.dtype == F16)
		run_typed<__half>(s, b, c.vec, false);
	else if (c.dtype == BF16)
		run_typed<__nv_bfloat16>(s, b, c.vec, false);
	else
		run_typed<float>(s, b, c.vec, false);
	if (c.dtype == F16)
		run_typed<__half>(s, b, c.vec, true);
	else if (c.dtype == BF16)
		run_typed<__nv_bfloat16>(s, b, c.vec, true);
	else
		run_typed<float>(s, b, c.vec, true);

	// float64 reference from the same (rounded) inputs
	const int64_t T = s.t, Dh = s.dh;
	err_acc eo, el, edq, edk, edv;
	std::vector<double> P(T * T), dS(T * T), O(T * Dh);
	for (int64_t h = 0; h < s.b * s.h; h++) {
		size_t base = (size_t)(h * T * Dh);
		auto Q = [&](int64_t i, int64_t d) { return get(b[0], c.dtype, base + i * Dh + d); };
		auto K = [&](int64_t i, int64_t d) { return get(b[1], c.dtype, base + i * Dh + d); };
		auto V = [&](int64_t i, int64_t d) { return get(b[2], c.dtype, base + i * Dh + d); };
		auto dO = [&](int64_t i, int64_t d) { return get(b[5], c.dtype, base + i * Dh + d); };
		for (int64_t i = 0; i < T; i++) {
			int64_t nj = c.causal ? i + 1 : T;
			double m = -INFINITY;
			for (int64_t j = 0; j < T; j++) {
				double sc = 0;
				if (j < nj) {
					for (int64_t d = 0; d < Dh; d++)
						sc += Q(i, d) * K(j, d);
					sc *= (double)s.scale;
					m = std::max(m, sc);
				}
				P[i * T + j] = sc;
			}
			double l = 0;
			for (int64_t j = 0; j < nj; j++)
				l += exp(P[i * T + j] - m);
			for (int64_t j = 0; j < T; j++)
				P[i * T + j] = j < nj ? exp(P[i * T + j] - m) / l : 0.0;
			double lse_ref = m + log(l);
			float lse_got;
			memcpy(&lse_got, b[4].p + 4 * (size_t)(h * T + i), 4);
			el.add(lse_got, lse_ref);
			for (int64_t d = 0; d < Dh; d++) {
				double acc = 0;
				for (int64_t j = 0; j < nj; j++)
					acc += P[i * T + j] * V(j, d);
				O[i * Dh + d] = acc;
				eo.add(get(b[3], c.dtype, base + i * Dh + d), acc);
			}
			double delta = 0;
			for (int64_t d = 0; d < Dh; d++)
				delta += dO(i, d) * O[i * Dh + d];
			for (int64_t j = 0; j < T; j++) {
				double dp = 0;
				if (j < nj)
					for (int64_t d = 0; d < Dh; d++)
						dp += dO(i, d) * V(j, d);
				dS[i * T + j] = P[i * T + j] * (dp - delta);
			}
		}
		for (int64_t i = 0; i < T; i++)
			for (int64_t d = 0; d < Dh; d++) {
				double acc = 0;
				for (int64_t j = 0; j < T; j++)
					acc += dS[i * T + j] * K(j, d);
				edq.add(get(b[6], c.dtype, base + i * Dh + d), acc * s.scale);
			}
		for (int64_t j = 0; j < T; j++)
			for (int64_t d = 0; d < Dh; d++) {
				double ak = 0, av = 0;
				for (int64_t i = 0; i < T; i++) {
					ak += dS[i * T + j] * Q(i, d);
					av += P[i * T + j] * dO(i, d);
				}
				edk.add(get(b[7], c.dtype, base + j * Dh + d), ak * s.scale);
				edv.add(get(b[8], c.dtype, base + j * Dh + d), av);
			}
	}
	return {eo.value(), el.value(), edq.value(), edk.value(), edv.value()};
}

}  // namespace

int main(int argc, char **argv)
{
	std::string filter = argc > 1 ? argv[1] : "";
	std::vector<test_case> cases;
	const char *names[] = {"f32", "f16", "bf16"};
	// head dims: the three padded sizes, tails of each, and ones that are not multiples of 8
	int dhs[] = {16, 17, 32, 40, 64, 72, 100, 128};
	int64_t ts[] = {1, 37, 130, 200};
	for (int dtype : {F16, BF16, F32})
		for (int dh : dhs)
			for (int64_t t : ts)
				for (int causal : {0, 1})
					for (int vec : {0, 1}) {
						if (vec && (dh % 8 || dtype == F32))
							continue;
						if (!vec && dh % 8 == 0 && dtype != F32 && t != 130)
							continue;   // element-wise path: one t is enough
						cases.push_back({dtype, dh, t, causal, vec, 2,
								 (int)((dh + t) % 2), 2.0f});
					}
	// peaky softmax (large logits): online rescaling across tiles matters
	cases.push_back({BF16, 64, 300, 0, 1, 1, 0, 8.0f});
	cases.push_back({F16, 128, 260, 1, 1, 1, 1, 8.0f});
	cases.push_back({F32, 64, 300, 1, 0, 1, 0, 8.0f});

	int failed = 0, run = 0;
	double worst[3][5] = {};
	for (auto &c : cases) {
		char name[128];
		snprintf(name, sizeof name, "%s dh=%d t=%ld causal=%d vec=%d bh=%d amp=%g copy@%s",
			 names[c.dtype], c.dh, (long)c.t, c.causal, c.vec, c.bh, c.amp,
			 c.copy_at_issue ? "issue" : "wait");
		if (!filter.empty() && std::string(name).find(filter) == std::string::npos)
			continue;
		errs e = run_case(c);
		// tolerances: float32 in float32; 16-bit: P, dS and outputs rounded to 8 or 11 bits
		double tol = c.dtype == F32 ? 2e-5 : c.dtype == F16 ? 4e-3 : 3e-2;
		double v[5] = {e.o, e.lse, e.dq, e.dk, e.dv};
		bool ok = true;
		for (int i = 0; i < 5; i++) {
			ok = ok && v[i] <= (i == 1 ? 1e-5 : tol);
			worst[c.dtype][i] = std::max(worst[c.dtype][i], v[i]);
		}
		run++;
		failed += !ok;
		printf("%-4s %-62s O %.2e LSE %.2e dQ %.2e dK %.2e dV %.2e\n", ok ? "ok" : "FAIL",
		       name, e.o, e.lse, e.dq, e.dk, e.dv);
		fflush(stdout);
	}
	for (int d = 0; d < 3; d++)
		printf("worst %-4s O %.2e LSE %.2e dQ %.2e dK %.2e dV %.2e\n", names[d], worst[d][0],
		       worst[d][1], worst[d][2], worst[d][3], worst[d][4]);
	printf("%d cases, %d failed; %ld warp-collective ops, %ld mma emulated\n", run, failed,
	       emu::collective_ops, emu::mma_ops);
	return failed != 0;
}
