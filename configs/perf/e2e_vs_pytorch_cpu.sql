-- configs/perf/e2e_vs_pytorch_cpu.sql: the figures docs/performance.md reports, from a database
-- written by configs/e2e_vs_pytorch_cpu.yaml (latest run in the file):
--   sqlite3 -header -column perf.db < configs/perf/e2e_vs_pytorch_cpu.sql
-- Medians over measured iterations (warm-up excluded), per case and phase; time per pass is
-- the median of fwd (+ bwd) per iteration. Model FLOP/s = model FLOPs of the pass / that time;
-- "of matmul" divides by the oneDNN 2048^3 matmul rate of the same dtype (mean of the cases
-- measured before and after the models in the same run).
WITH run AS (SELECT max(id) AS id FROM runs),
it AS (  -- one row per case and measured iteration: the pass's time
  SELECT c.id AS case_id, s.iter, sum(s.ns) AS ns
  FROM cases c JOIN run ON c.run_id = run.id JOIN samples s ON s.case_id = c.id
  WHERE c.status = 'ok' AND s.iter >= c.warmup
  GROUP BY c.id, s.iter),
ranked AS (
  SELECT case_id, ns, row_number() OVER (PARTITION BY case_id ORDER BY ns) AS k,
         count(*) OVER (PARTITION BY case_id) AS n
  FROM it),
med AS (  -- the median (mean of the two middle values for an even count)
  SELECT case_id, avg(ns) AS ns FROM ranked
  WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY case_id),
m AS (
  SELECT c.suite, c.impl, c.dtype, c.pass, med.ns,
         coalesce(c.flops_fwd, 0) + coalesce(c.flops_bwd, 0) AS flops
  FROM cases c JOIN run ON c.run_id = run.id JOIN med ON med.case_id = c.id),
mm AS (SELECT dtype, avg(flops / ns) AS gflops FROM m WHERE suite = 'matmul' GROUP BY dtype)
SELECT b.dtype, b.pass,
       round(b.ns / 1e6, 1) AS benchdb_ms,
       round(p.ns / 1e6, 1) AS pytorch_ms,
       round(p.ns / b.ns, 2) AS speedup_vs_pytorch,
       round(b.flops / b.ns, 1) AS benchdb_gflops,
       round(p.flops / p.ns, 1) AS pytorch_gflops,
       round(mm.gflops, 1) AS matmul_gflops,
       round(b.flops / b.ns / mm.gflops, 2) AS benchdb_of_matmul
FROM m b
LEFT JOIN m p ON p.suite = 'e2e' AND p.impl = 'pytorch' AND p.dtype = b.dtype AND p.pass = b.pass
LEFT JOIN mm ON mm.dtype = b.dtype
WHERE b.suite = 'e2e' AND b.impl = 'benchdb'
ORDER BY b.dtype DESC, b.pass;
