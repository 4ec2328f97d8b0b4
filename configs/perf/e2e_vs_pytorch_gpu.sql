-- configs/perf/e2e_vs_pytorch_gpu.sql: the figures of docs/performance.md's GPU section, from a
-- database written by configs/e2e_vs_pytorch_gpu.yaml (latest run in the file):
--   sqlite3 -header -column perf.db < configs/perf/e2e_vs_pytorch_gpu.sql
-- Medians over measured iterations (warm-up excluded), per case; time per pass is the median of
-- fwd + bwd per iteration (CUDA-event times on both sides). Model FLOP/s = model FLOPs of the
-- pass / that time; "of matmul" divides by the cuBLASLt 8192^3 matmul rate of the same dtype
-- (mean of the cases measured before and after the models in the same run).
WITH run AS (SELECT max(id) AS id FROM runs),
it AS (
  SELECT c.id AS case_id, s.iter, sum(s.ns) AS ns
  FROM cases c JOIN run ON c.run_id = run.id JOIN samples s ON s.case_id = c.id
  WHERE c.status = 'ok' AND s.iter >= c.warmup
  GROUP BY c.id, s.iter),
ranked AS (
  SELECT case_id, ns, row_number() OVER (PARTITION BY case_id ORDER BY ns) AS k,
         count(*) OVER (PARTITION BY case_id) AS n
  FROM it),
med AS (
  SELECT case_id, avg(ns) AS ns FROM ranked
  WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY case_id),
m AS (
  SELECT c.suite, c.impl, c.model, c.dtype, c.pass, med.ns,
         coalesce(c.flops_fwd, 0) + coalesce(c.flops_bwd, 0) AS flops
  FROM cases c JOIN run ON c.run_id = run.id JOIN med ON med.case_id = c.id),
mm AS (SELECT dtype, avg(flops / ns) AS gflops FROM m WHERE suite = 'matmul' GROUP BY dtype)
SELECT b.model, b.dtype, b.pass,
       round(b.ns / 1e6, 2) AS benchdb_ms,
       round(p.ns / 1e6, 2) AS eager_ms,
       round(p.ns / b.ns, 2) AS vs_eager,
       round(pc.ns / 1e6, 2) AS compile_ms,
       round(pc.ns / b.ns, 2) AS vs_compile,
       round(b.flops / b.ns / 1e3, 1) AS benchdb_tflops,
       round(mm.gflops / 1e3, 1) AS matmul_tflops,
       round(b.flops / b.ns / mm.gflops, 2) AS benchdb_of_matmul,
       round(p.flops / p.ns / mm.gflops, 2) AS eager_of_matmul
FROM m b
LEFT JOIN m p ON p.suite = 'e2e' AND p.impl = 'pytorch' AND p.model = b.model
     AND p.dtype = b.dtype AND p.pass = b.pass
LEFT JOIN m pc ON pc.suite = 'e2e' AND pc.impl = 'pytorch_compile' AND pc.model = b.model
     AND pc.dtype = b.dtype AND pc.pass = b.pass
LEFT JOIN mm ON mm.dtype = b.dtype
WHERE b.suite = 'e2e' AND b.impl = 'benchdb'
ORDER BY b.dtype DESC, b.flops;
