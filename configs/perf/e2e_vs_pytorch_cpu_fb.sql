-- configs/perf/e2e_vs_pytorch_cpu_fb.sql: the figures docs/performance.md reports from the
-- rounds of configs/perf/e2e_vs_pytorch_cpu_fb.yaml (`runner run ... --repeat N`): every run
-- with the label of the latest run in the file is a round.
--   sqlite3 -header -column perf.db < configs/perf/e2e_vs_pytorch_cpu_fb.sql
-- Per round: the median over measured iterations (warm-up excluded) of fwd + bwd per iteration
-- for benchdb, PyTorch eager (pytorch) and torch.compile (pytorch_compile), the speedups
-- (their time / benchdb's), model GFLOP/s, and the oneDNN 2048^3 matmul rate (in the dtype) of the
-- same round and dtype (mean of the cases before and after the models). Then the median of the
-- rounds and their range (min-max) for each column. One set of rows per dtype the rounds ran
-- (e2e_vs_pytorch_cpu_fb.yaml: float32; e2e_vs_pytorch_cpu_fb_bf16.yaml: bfloat16).
WITH rounds AS (
  SELECT id FROM runs WHERE label = (SELECT label FROM runs ORDER BY id DESC LIMIT 1)),
it AS (
  SELECT c.id AS case_id, s.iter, sum(s.ns) AS ns
  FROM cases c JOIN rounds r ON c.run_id = r.id JOIN samples s ON s.case_id = c.id
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
  SELECT c.run_id, c.suite, c.impl, c.dtype, med.ns,
         coalesce(c.flops_fwd, 0) + coalesce(c.flops_bwd, 0) AS flops
  FROM cases c JOIN rounds r ON c.run_id = r.id JOIN med ON med.case_id = c.id),
per_round AS (
  SELECT b.run_id AS round, b.dtype,
         b.ns / 1e6 AS benchdb_ms, e.ns / 1e6 AS eager_ms, k.ns / 1e6 AS compile_ms,
         e.ns / b.ns AS vs_eager, k.ns / b.ns AS vs_compile,
         b.flops / b.ns AS benchdb_gflops,
         (SELECT avg(x.flops / x.ns) FROM m x WHERE x.run_id = b.run_id AND x.dtype = b.dtype
            AND x.suite = 'matmul')
           AS matmul_gflops
  FROM m b
  LEFT JOIN m e ON e.run_id = b.run_id AND e.dtype = b.dtype AND e.impl = 'pytorch'
  LEFT JOIN m k ON k.run_id = b.run_id AND k.dtype = b.dtype AND k.impl = 'pytorch_compile'
  WHERE b.suite = 'e2e' AND b.impl = 'benchdb'),
cols AS (
  SELECT dtype, 'benchdb_ms' AS col, benchdb_ms AS v FROM per_round
  UNION ALL SELECT dtype, 'eager_ms', eager_ms FROM per_round
  UNION ALL SELECT dtype, 'compile_ms', compile_ms FROM per_round
  UNION ALL SELECT dtype, 'vs_eager', vs_eager FROM per_round
  UNION ALL SELECT dtype, 'vs_compile', vs_compile FROM per_round
  UNION ALL SELECT dtype, 'benchdb_gflops', benchdb_gflops FROM per_round
  UNION ALL SELECT dtype, 'matmul_gflops', matmul_gflops FROM per_round
  UNION ALL SELECT dtype, 'of_matmul', benchdb_gflops / matmul_gflops FROM per_round),
cranked AS (
  SELECT dtype, col, v, row_number() OVER (PARTITION BY dtype, col ORDER BY v) AS k,
         count(*) OVER (PARTITION BY dtype, col) AS n FROM cols WHERE v IS NOT NULL),
summary AS (
  SELECT dtype, col, (SELECT avg(v) FROM cranked c2 WHERE c2.dtype = c.dtype AND c2.col = c.col
                      AND c2.k IN ((c2.n + 1) / 2, (c2.n + 2) / 2)) AS median,
         min(v) AS lo, max(v) AS hi, max(n) AS rounds
  FROM cranked c GROUP BY dtype, col)
SELECT 'round ' || round AS what, dtype, round(benchdb_ms, 1) AS benchdb_ms, round(eager_ms, 1) AS eager_ms,
       round(compile_ms, 1) AS compile_ms, round(vs_eager, 2) AS vs_eager,
       round(vs_compile, 2) AS vs_compile, round(benchdb_gflops, 1) AS benchdb_gflops,
       round(matmul_gflops, 1) AS matmul_gflops,
       round(benchdb_gflops / matmul_gflops, 2) AS of_matmul
FROM per_round
UNION ALL
SELECT 'median (min-max)', d.dtype,
  (SELECT printf('%.1f (%.1f-%.1f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'benchdb_ms'),
  (SELECT printf('%.1f (%.1f-%.1f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'eager_ms'),
  (SELECT printf('%.1f (%.1f-%.1f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'compile_ms'),
  (SELECT printf('%.2f (%.2f-%.2f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'vs_eager'),
  (SELECT printf('%.2f (%.2f-%.2f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'vs_compile'),
  (SELECT printf('%.1f (%.1f-%.1f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'benchdb_gflops'),
  (SELECT printf('%.1f (%.1f-%.1f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'matmul_gflops'),
  (SELECT printf('%.2f (%.2f-%.2f)', median, lo, hi) FROM summary s WHERE s.dtype = d.dtype AND col = 'of_matmul')
FROM (SELECT DISTINCT dtype FROM per_round) d;
