import subprocess, sys, os
CUDA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../kernels/cuda')
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../kernels/cuda/flash.cu'), encoding='utf-8').read()
prims = open('emu_prims.h').read()
muts = [
 ("K ldmatrix column half", "ldsm_x4(b, sk + (nb * 16 + br) * LD + kk * 16 + bc);", "ldsm_x4(b, sk + (nb * 16 + br) * LD + kk * 16 + ac);", None),
 ("causal mask >=", "if (col >= ncol || (p.causal && col > row))", "if (col >= ncol || (p.causal && col >= row))", None),
 ("tail mask off by one", "if (col >= ncol || (p.causal && col > row))", "if (col > ncol || (p.causal && col > row))", None),
 ("P pack order", "pa[mi][1] = pack2<T>(s[mi][2 * kk][2], s[mi][2 * kk][3]);\n\t\t\t\tpa[mi][2] = pack2<T>(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);",
                  "pa[mi][2] = pack2<T>(s[mi][2 * kk][2], s[mi][2 * kk][3]);\n\t\t\t\tpa[mi][1] = pack2<T>(s[mi][2 * kk + 1][0], s[mi][2 * kk + 1][1]);", None),
 ("V without .trans", "ldsm_x4_t(b, sv + ", "ldsm_x4(b, sv + ", None),
 ("fwd loop sync removed", "		__syncthreads();   // tile j landed", "		//", None),
 ("fwd wait removed", "	for (int j = 0; j < ntiles; j++) {\n		cp_async_wait_all();", "	for (int j = 0; j < ntiles; j++) {\n", None),
 ("quad shuffle 1 only", "m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));", "", None),
 ("rescale skipped", "acc[mi][ni][2 * h] *= alpha;", "", None),
 ("bwd lse column", "fmaf(st[ni][e], p.scale_log2, -sst[qi].x)", "fmaf(st[ni][e], p.scale_log2, -sst[qi ^ 1].x)", None),
 ("bwd dS transposed store", "sds[qi * LDS + kl] = ", "sds[(kl % BM) * LDS + qi % BN] = ", None),
 ("bwd dQ sync removed", "		__syncthreads();   // dS complete", "", None),
 ("bwd causal start tile late", "const int qt0 = p.causal ? (int)(k0 / BM) : 0, nqt = (int)ceil_div(p.t, BM);\n	const int kw", "const int qt0 = p.causal ? (int)(k0 / BM) + 1 : 0, nqt = (int)ceil_div(p.t, BM);\n	const int kw", None),
 ("bwd dK from Q without .trans", "ldsm_x4_t(b, sq + (kq * 16", "ldsm_x4(b, sq + (kq * 16", None),
 ("bwd dQ warp grid", "const int wm = warp % WM, wn = warp / WM;", "const int wm = warp % WM, wn = warp % WM;", None),
 ("load row bound", "bool ok = i * RSTEP < left;", "bool ok = i * RSTEP <= left;", None),
 ("heavy-first block map", "const int q0 = (p.nblk - 1 - (int)(blockIdx.x % p.nblk)) * BM;   // < t ≤ INT_MAX\n	const int64_t head = bh * p.t * p.dh;\n	const uint16_t", "const int q0 = (p.nblk - 1 - (int)(blockIdx.x % p.nblk)) * BM + (p.nblk > 1 ? BM : 0);\n	const int64_t head = bh * p.t * p.dh;\n	const uint16_t", None),
 ("f32 fwd softmax quad", "tm = fmaxf(tm, __shfl_xor_sync(0xffffffffu, tm, 2));", "", None),
 ("f32 bwd dS", "sds[r * LDS + lane] = pe * (da[i] - sdelta[r]);", "sds[r * LDS + lane] = pe * da[i];", None),
 ("EMU: A layout rows a2,a3 <-> a4,a5", None, None, ("int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;", "int row = (i < 4) ? (i < 2 ? g : g + 8) : (i < 6 ? g : g + 8); int col_bug = 1; (void)col_bug;\n\t\t\tif (i >= 2 && i < 6) row = (i < 4) ? g : g + 8;")),
 ("EMU: B layout k halves", None, None, ("int row = 2 * t + (i & 1) + (i >= 2 ? 8 : 0);", "int row = 2 * t + (i & 1) + (i >= 2 ? 0 : 8);")),
 ("EMU: ldmatrix trans off", None, None, ("if (!trans) {", "if (true) {")),
]
muts += [
 ("bwd top sync removed", "		__syncthreads();   // tile qt landed; every warp is done with tile qt − 1 and dS", "", None),
 ("f32 fwd sync after S removed", "				ss[r * LDS + c] = ok ? sa[i] * p.scale : -INFINITY;\n			}\n		}\n		__syncthreads();", "				ss[r * LDS + c] = ok ? sa[i] * p.scale : -INFINITY;\n			}\n		}\n", None),
 ("f32 bwd sync before loads removed", "		__syncthreads();   // every thread is done with the previous tile\n		load_tile_f32<BM, D, NT>(sq", "		load_tile_f32<BM, D, NT>(sq", None),
 ("EMU: coherent alternative A layout", None, None, ("int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;\n\t\t\tint col = 2 * t + (i & 1) + (i >= 4 ? 8 : 0);", "int row = i < 4 ? g : g + 8;\n\t\t\tint col = 2 * t + (i & 1) + (i % 4 >= 2 ? 8 : 0);")),
 ("EMU: coherent alternative C layout", None, None, ("int row = i < 2 ? g : g + 8, col = 2 * t + (i & 1);", "int row = i % 2 ? g + 8 : g, col = 2 * t + i / 2;")),
]
# the head dim 128 forward's layout (Q re-read from shared memory, two m-tiles per warp), the
# backward's row statistics (8-byte cp.async into a double buffer) and its 8-warp dQ grid
muts += [
 ("fwd Q re-read: second m-tile offset", "ldsm_x4(qs[mi], sq + (wrow + mi * 16 + ar) * LD + kk * 16 + ac);", "ldsm_x4(qs[mi], sq + (wrow + ar) * LD + kk * 16 + ac);", None, "dh=128 t=130"),
 ("fwd Q re-read: k-step column", "ldsm_x4(qs[mi], sq + (wrow + mi * 16 + ar) * LD + kk * 16 + ac);", "ldsm_x4(qs[mi], sq + (wrow + mi * 16 + ar) * LD + kk * 16);", None, "dh=128 t=130"),
 ("fwd warp row stride", "const int wrow = warp * MT * 16;", "const int wrow = warp * 16;", None),
 ("fwd Q in a K/V stage at dh 128", "uint16_t *const sq = smem + (cfg::Q_REGS ? STAGE : 2 * STAGE);", "uint16_t *const sq = smem + STAGE;", None, "dh=128 t=130"),
 ("bwd stats from the other buffer", "const float2 *sst = sst0 + buf * BM;", "const float2 *sst = sst0 + (1 - buf) * BM;", None),
 ("bwd stats row offset", "cp_async8(dst + i, stats + q0 + i, q0 + i < p.t ? 8 : 0);", "cp_async8(dst + i, stats + q0 + (i ^ 1), q0 + i < p.t ? 8 : 0);", None),
 ("bwd stats not zeroed past t", "cp_async8(dst + i, stats + q0 + i, q0 + i < p.t ? 8 : 0);", "if (q0 + i < p.t) cp_async8(dst + i, stats + q0 + i, 8);", None),
 ("bwd stats Delta from LSE", "dpt[ni][e] = st[ni][e] * (dpt[ni][e] - sst[qi].y);", "dpt[ni][e] = st[ni][e] * (dpt[ni][e] - sst[qi].x);", None),
 ("bwd dQ column block", "int col = wn * DC + ni * 8 + 2 * tq;", "int col = wn * 16 + ni * 8 + 2 * tq;", None),
 ("EMU: cp.async copies half its size", None, None, ("			memcpy(c.dst, c.src, c.size);\n		else\n			memset(c.dst, 0, c.size);\n	}\n	emu::cur->pending.clear();", "			memcpy(c.dst, c.src, c.size / 2);\n		else\n			memset(c.dst, 0, c.size);\n	}\n	emu::cur->pending.clear();")),
]
filt = sys.argv[1]
os.makedirs('mut', exist_ok=True)
caught = 0
only = sys.argv[2] if len(sys.argv) > 2 else ''
for name, a, b, pm, *own in muts:   # own: a filter of its own (bugs only some head dims reach)
    if only and only not in name: continue
    s, p = src, prims
    if a is not None:
        assert a in s, name
        s = s.replace(a, b, 1)
    if pm is not None:
        assert pm[0] in p, name
        p = p.replace(pm[0], pm[1], 1)
    open('mut/flash.cu', 'w').write(s); open('mut/emu_prims.h', 'w').write(p)
    subprocess.run("cd mut && cp ../emu.cpp . && sh ../extract.sh flash.cu >/dev/null && g++ -std=c++17 -O1 -w -I/usr/local/cuda/include -I" + CUDA_DIR + " emu.cpp -I" + os.path.dirname(os.path.abspath(__file__)) + " -o emu", shell=True, check=True)
    r = subprocess.run(["./mut/emu", own[0] if own else filt], capture_output=True, text=True, timeout=900)
    lines = r.stdout.strip().splitlines()
    nfail = sum(1 for l in lines if l.startswith("FAIL"))
    crashed = r.returncode not in (0, 1)
    ok = r.returncode != 0
    caught += ok
    why = "crash/abort: " + (r.stderr.strip().splitlines() or ["?"])[-1][:90] if crashed else f"{nfail} failing cases"
    print(f"{'caught' if ok else 'MISSED'}  {name:40s} {why}", flush=True)
print(f"{caught}/{len(muts)} mutations caught")
