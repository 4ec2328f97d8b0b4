-- configs/perf/flash_vs_naive_cpu.sql: the ratios docs/performance.md reports, from a database
-- written by configs/perf/flash_vs_naive_cpu.yaml (latest run in the file):
--   sqlite3 -header -column perf.db < configs/perf/flash_vs_naive_cpu.sql
-- Means over measured iterations (warm-up excluded), as `report` shows them.
WITH run AS (SELECT max(id) AS id FROM runs),
m AS (
  SELECT c.impl, c.suite, c.flops_fwd, c.peak_bytes,
         (SELECT avg(ns) FROM samples s WHERE s.case_id = c.id AND s.phase = 'fwd' AND s.iter >= c.warmup) AS fwd_ns,
         (SELECT avg(ns) FROM samples s WHERE s.case_id = c.id AND s.phase = 'bwd' AND s.iter >= c.warmup) AS bwd_ns
  FROM cases c, run WHERE c.run_id = run.id AND c.status = 'ok')
SELECT
  round((SELECT fwd_ns FROM m WHERE impl = 'naive') / (SELECT fwd_ns FROM m WHERE impl = 'flash'), 2) AS fwd_naive_over_flash,
  round((SELECT bwd_ns FROM m WHERE impl = 'naive') / (SELECT bwd_ns FROM m WHERE impl = 'flash'), 2) AS bwd_naive_over_flash,
  round((SELECT fwd_ns + bwd_ns FROM m WHERE impl = 'naive') / (SELECT fwd_ns + bwd_ns FROM m WHERE impl = 'flash'), 2) AS total_naive_over_flash,
  round((SELECT peak_bytes * 1.0 FROM m WHERE impl = 'naive') / (SELECT peak_bytes FROM m WHERE impl = 'flash'), 1) AS peak_mem_naive_over_flash,
  round((SELECT flops_fwd / fwd_ns FROM m WHERE impl = 'flash'), 1) AS flash_fwd_gflops,
  round((SELECT avg(flops_fwd / fwd_ns) FROM m WHERE suite = 'matmul'), 1) AS matmul_fp32_gflops,
  round((SELECT flops_fwd / fwd_ns FROM m WHERE impl = 'flash') / (SELECT avg(flops_fwd / fwd_ns) FROM m WHERE suite = 'matmul'), 2) AS flash_fwd_over_matmul;
