#!/usr/bin/env python3
"""Planted bugs in the CUDA backend (kernels/cuda/), each run against the emulated device's tests
(tests/CMakeLists.txt, label emu); every one must be caught (a failing test or an emulator fault).

usage: tests/flashemu/mutate_backend.py [name filter]     (from anywhere; a few minutes per 5)

Each mutation edits one source file of the checkout in place, rebuilds the emu test it names in
build-mut/ (configured on first use) and runs it; the file is restored afterwards, whatever
happens. The checkout must have no uncommitted change to the mutated files."""
import os, subprocess, sys, time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.path.join(ROOT, 'build-mut')
K, F, B, A = ('kernels/cuda/kernels.cu', 'kernels/cuda/flash.cu', 'kernels/cuda/backend_cuda.c',
              'kernels/cuda/attention_cuda.c')
OPS, ATT, MODEL = 'test_cuda_ops_emu', 'test_cuda_attention_emu', 'test_cuda_model_emu'

# (name, file, text, replacement, test)
MUTATIONS = [
    # kernels.cu: indices, bounds, barriers, grid-stride loops
    ("embedding column off by one", K, "out[i] = table[(int64_t)tokens[i / d] * d + i % d]",
     "out[i] = table[(int64_t)tokens[i / d] * d + (i + 1) % d]", OPS),
    ("block_sum: barrier before warp 0 reads the partial sums removed", K,
     "\tif (lane == 0)\n\t\tpart[warp] = x;\n\t__syncthreads();\n\tif (warp == 0) {\n\t\tx = lane < (int)(blockDim.x >> 5) ? part[lane] : T(0);",
     "\tif (lane == 0)\n\t\tpart[warp] = x;\n\tif (warp == 0) {\n\t\tx = lane < (int)(blockDim.x >> 5) ? part[lane] : T(0);", OPS),
    ("block_max: last shuffle step skipped", K,
     "\t\tx = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));\n\tint lane",
     "\t\tif (o > 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));\n\tint lane", OPS),
    ("rmsnorm dg partial sums: barrier removed", K,
     "\tpart[threadIdx.y][threadIdx.x] = s;\n\t__syncthreads();",
     "\tpart[threadIdx.y][threadIdx.x] = s;", OPS),
    ("rmsnorm dg: last row chunk dropped", K, "for (int64_t c = 0; c < chunks; c++)",
     "for (int64_t c = 0; c + 1 < chunks; c++)", OPS),
    ("rmsnorm dg: rows past the chunk read (bound off by one)", K,
     "int64_t r1 = r0 + chunk_rows < n ? r0 + chunk_rows : n;",
     "int64_t r1 = r0 + chunk_rows < n ? r0 + chunk_rows + 1 : n;", OPS),
    ("causal softmax: one key too few", K, "int64_t len = causal ? row % t + 1 : t;",
     "int64_t len = causal ? row % t : t;", OPS),
    ("RoPE merge: rotation sign", K, "rope + ti * dh, j, -1.0f);", "rope + ti * dh, j, 1.0f);", OPS),
    ("swiglu backward: gate column", K, "store(du, row * 2 * f + f + j, dy * a * s);",
     "store(du, row * 2 * f + j + 1, dy * a * s);", OPS),
    ("cross-entropy backward: target off by one", K, "(j == tgt ? 1.0f : 0.0f)",
     "(j == tgt + 1 ? 1.0f : 0.0f)", OPS),
    ("AdamW: bias correction inverted", K, "sqrtf(vi) / a.bc2_sqrt", "sqrtf(vi) * a.bc2_sqrt", OPS),
    ("grid-stride loop: stride of one block", K, "i += (int64_t)gridDim.x * blockDim.x)",
     "i += (int64_t)blockDim.x)", OPS),
    ("xent_lse launched with 1000 threads (a partial warp)", K,
     "xent_lse<<<row_blocks(n), 1024, 0, stream>>>", "xent_lse<<<row_blocks(n), 1000, 0, stream>>>",
     OPS),
    # backend_cuda.c: the GEMM's description to cuBLASLt, the workspace
    ("gemm: default lda of a transposed A", B, "n.lda = n.trans_a ? n.m : n.k;",
     "n.lda = n.trans_a ? n.k : n.m;", OPS),
    ("gemm: default batch stride of C", B, "n.stride_c = n.ldc * n.m;", "n.stride_c = n.ldc * n.n;",
     OPS),
    ("gemm: B's layout given A's leading dimension", B,
     "g->trans_b ? g->n : g->k, g->ldb,", "g->trans_b ? g->n : g->k, g->lda,", OPS),
    ("gemm: transposes of the column-major call swapped", B,
     "cublasOperation_t ta = g->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;",
     "cublasOperation_t ta = g->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;", OPS),
    ("gemm: plan cache ignores the operands' alignment", B,
     "p->align_a == aa && p->align_b == ab &&\n\t       p->align_c == ac;", "1;", OPS),
    ("rmsnorm backward: workspace one row chunk short", B,
     "if (!(cb->norm_work = cuda_alloc(dev, need * sizeof(float))))",
     "if (!(cb->norm_work = cuda_alloc(dev, (need - need / 5) * sizeof(float))))", OPS),
    ("timing: the start event recorded before the timing delay (the delay inside the window)", B,
     "\tint start = slot % 2 == 0;\n\tif (start) {\n\t\tdouble cycles = (double)timing_delay_ns(cb, slot) * cb->clock_khz * 1e-6;\n\t\tCUDA_TRY(dev, cuda_timing_delay((long long)ceil(cycles), cb->stream), \"timing delay\");\n\t}\n\tCUDA_TRY(dev, cudaEventRecord(cb->ev[slot], cb->stream), \"cudaEventRecord\");",
     "\tint start = slot % 2 == 0;\n\tCUDA_TRY(dev, cudaEventRecord(cb->ev[slot], cb->stream), \"cudaEventRecord\");\n\tif (start) {\n\t\tdouble cycles = (double)timing_delay_ns(cb, slot) * cb->clock_khz * 1e-6;\n\t\tCUDA_TRY(dev, cuda_timing_delay((long long)ceil(cycles), cb->stream), \"timing delay\");\n\t}",
     OPS),
    ("timing: the delay before the end event instead of the start", B, "\tint start = slot % 2 == 0;",
     "\tint start = slot % 2 == 1;", OPS),
    # attention_cuda.c: strides, workspace sizes, the order of the backward
    ("naive backward: dK from dS untransposed", A,
     "att_gemm(dev, s, s->t, s->dh, s->t, 1, 0, a->fs.scale, m, m, ds, q, dk)",
     "att_gemm(dev, s, s->t, s->dh, s->t, 0, 0, a->fs.scale, m, m, ds, q, dk)", ATT),
    ("naive backward: dP = dO V without the transpose", A,
     "att_gemm(dev, s, s->t, s->t, s->dh, 0, 1, 1.0f, m, DTYPE_FLOAT32, d_o, v, dp)",
     "att_gemm(dev, s, s->t, s->t, s->dh, 0, 0, 1.0f, m, DTYPE_FLOAT32, d_o, v, dp)", ATT),
    ("naive backward: softmax backward after dQ (order)", A,
     "\tCUDA_TRY(dev, cuda_softmax_bwd(a->p, dp, ds, (int)m, s->b * s->h * s->t, s->t,\n\t\t\t\t\t cuda_dev_stream(dev)), \"attention softmax backward\");\n\tif ((rc = att_gemm(dev, s, s->t, s->dh, s->t, 0, 0, a->fs.scale, m, m, ds, k, dq)) ||",
     "\tif ((rc = att_gemm(dev, s, s->t, s->dh, s->t, 0, 0, a->fs.scale, m, m, ds, k, dq)))\n\t\treturn rc;\n\tCUDA_TRY(dev, cuda_softmax_bwd(a->p, dp, ds, (int)m, s->b * s->h * s->t, s->t,\n\t\t\t\t\t cuda_dev_stream(dev)), \"attention softmax backward\");\n\tif (0 ||",
     ATT),
    ("naive: 16-bit scores scratch sized in the compute dtype", A,
     "(rc = reserve(dev, sh, SCR_SCORES, scores * sizeof(float))))",
     "(rc = reserve(dev, sh, SCR_SCORES, scores * es)))", ATT),
    ("flash backward: workspace without the dQ accumulator's last row", A,
     "rc = reserve(dev, sh, SCR_WORK, cuda_flash_bwd_workspace(&a->fs));",
     "rc = reserve(dev, sh, SCR_WORK, cuda_flash_bwd_workspace(&a->fs) - 4 * (size_t)s->dh);", ATT),
    ("converting backward: the float32 dO given to the 16-bit kernels", A,
     "\t\td_o = sh->scr[SCR_DO];\n", "", ATT),
    ("converting forward: O converted back from the wrong copy", A,
     "rc = dev->ops->convert(dev, o, DTYPE_FLOAT32, out, s->math, elems);",
     "rc = dev->ops->convert(dev, o, DTYPE_FLOAT32, a->v16, s->math, elems);", ATT),
    # flash.cu through the backend (tests/flashemu/mutate.py has 27 more, kernel-level)
    ("flash: causal mask >=", F, "if (col >= ncol || (p.causal && col > row))",
     "if (col >= ncol || (p.causal && col >= row))", ATT),
    ("flash: dQ conversion one element short", F, "(b.dq_acc, b.dq, count);",
     "(b.dq_acc, b.dq, count - 1);", ATT),
    ("flash: dQ accumulator half cleared (a second backward adds to the first)", F,
     "cudaMemsetAsync(b.dq_acc, 0, (size_t)count * 4, stream)",
     "cudaMemsetAsync(b.dq_acc, 0, (size_t)count * 2, stream)", ATT),
]


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else ''
    files = sorted({m[1] for m in MUTATIONS})
    if run(['git', 'diff', '--quiet', '--'] + files).returncode:
        sys.exit('mutate_backend: commit or stash the changes to %s first' % ' '.join(files))
    if not os.path.exists(os.path.join(BUILD, 'CMakeCache.txt')):
        r = run(['cmake', '-S', '.', '-B', BUILD, '-DCMAKE_BUILD_TYPE=Release'])
        if r.returncode:
            sys.exit(r.stdout + r.stderr)
    caught = total = 0
    for name, path, old, new, test in MUTATIONS:
        if only and only not in name:
            continue
        full = os.path.join(ROOT, path)
        src = open(full, encoding='utf-8').read()
        assert src.count(old) == 1, 'mutation "%s" does not match %s once' % (name, path)
        total += 1
        t0 = time.time()
        try:
            open(full, 'w', encoding='utf-8').write(src.replace(old, new))
            b = run(['cmake', '--build', BUILD, '-j2', '--target', test])
            if b.returncode:
                print('BROKEN  %-62s (the mutation does not build)' % name, flush=True)
                total -= 1
                continue
            else:
                env = dict(os.environ, OMP_NUM_THREADS='2', BENCHDB_EMU_COVERAGE='')
                r = subprocess.run([os.path.join(BUILD, 'tests', test)], cwd=BUILD,
                                   capture_output=True, text=True, timeout=900, env=env)
                out = r.stdout + r.stderr
                ok = r.returncode != 0
                lines = [l for l in out.splitlines() if 'EMU FAILURE' in l or 'emu ' in l or
                         'emu:' in l or l.startswith('[  FAILED  ] test_')]
                why = ('%s exit %d: ' % (test, r.returncode) + (lines[0] if lines else '')).strip()
        finally:
            open(full, 'w', encoding='utf-8').write(src)
        caught += ok
        print('%s  %-62s %5.0fs  %s' % ('caught' if ok else 'MISSED', name, time.time() - t0,
                                        why[:150]), flush=True)
    run(['cmake', '--build', BUILD, '-j2', '--target', OPS, ATT, MODEL])
    print('%d/%d planted bugs caught' % (caught, total))
    return 0 if caught == total else 1


if __name__ == '__main__':
    sys.exit(main())
