-- configs/perf/flash_vs_naive_cpu_s2048.sql: the per-ISA figures of docs/performance.md, from
-- a database holding one or more runs of configs/perf/flash_vs_naive_cpu_s2048.yaml:
--   sqlite3 -header -column perf.db < configs/perf/flash_vs_naive_cpu_s2048.sql
-- Per run and seq_len: naive/flash time (forward, backward, forward+backward), flash forward
-- rate / oneDNN fp32 matmul rate (the mean of the run's matmul cases), naive/flash peak memory;
-- then, per seq_len, the median and range of each ratio over the runs. Times are medians over
-- measured iterations (warm-up excluded); a per-case median resists the machine's noise better
-- than the mean.
WITH sweep_runs AS (
  SELECT id, label FROM runs WHERE sweep_name = 'flash-vs-naive-cpu-s2048' AND status = 'complete'),
measured AS (
  SELECT s.case_id, s.phase, s.ns,
         row_number() OVER (PARTITION BY s.case_id, s.phase ORDER BY s.ns) AS k,
         count(*) OVER (PARTITION BY s.case_id, s.phase) AS n
  FROM samples s JOIN cases c ON c.id = s.case_id JOIN sweep_runs r ON r.id = c.run_id
  WHERE s.iter >= c.warmup AND c.status = 'ok'),
median AS (   -- per case and phase: the median of the measured iterations, nanoseconds
  SELECT case_id, phase, avg(ns) AS ns FROM measured
  WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY case_id, phase),
cs AS (
  SELECT c.run_id, c.suite, c.impl, c.seq_len, c.flops_fwd, c.peak_bytes,
         (SELECT ns FROM median m WHERE m.case_id = c.id AND m.phase = 'fwd') AS fwd_ns,
         (SELECT ns FROM median m WHERE m.case_id = c.id AND m.phase = 'bwd') AS bwd_ns
  FROM cases c JOIN sweep_runs r ON r.id = c.run_id WHERE c.status = 'ok'),
matmul AS (SELECT run_id, avg(flops_fwd / fwd_ns) AS gflops FROM cs WHERE suite = 'matmul' GROUP BY run_id),
per_run AS (
  SELECT n.run_id, r.label, n.seq_len,
         n.fwd_ns / f.fwd_ns AS fwd_ratio,
         n.bwd_ns / f.bwd_ns AS bwd_ratio,
         (n.fwd_ns + n.bwd_ns) / (f.fwd_ns + f.bwd_ns) AS total_ratio,
         f.flops_fwd / f.fwd_ns AS flash_gflops, mm.gflops AS matmul_gflops,
         (f.flops_fwd / f.fwd_ns) / mm.gflops AS flash_over_matmul,
         n.peak_bytes * 1.0 / f.peak_bytes AS mem_ratio,
         n.peak_bytes / 1048576.0 AS naive_mib, f.peak_bytes / 1048576.0 AS flash_mib
  FROM cs n JOIN cs f ON f.run_id = n.run_id AND f.seq_len = n.seq_len AND f.impl = 'flash'
  JOIN sweep_runs r ON r.id = n.run_id JOIN matmul mm ON mm.run_id = n.run_id
  WHERE n.impl = 'naive' AND n.suite = 'attention'),
ranked AS (   -- each ratio's rank within its seq_len, for the medians over runs
  SELECT *, count(*) OVER (PARTITION BY seq_len) AS runs,
         row_number() OVER (PARTITION BY seq_len ORDER BY total_ratio) AS k_total,
         row_number() OVER (PARTITION BY seq_len ORDER BY flash_over_matmul) AS k_rate,
         row_number() OVER (PARTITION BY seq_len ORDER BY mem_ratio) AS k_mem,
         row_number() OVER (PARTITION BY seq_len ORDER BY fwd_ratio) AS k_fwd,
         row_number() OVER (PARTITION BY seq_len ORDER BY bwd_ratio) AS k_bwd
  FROM per_run)
SELECT label AS run, seq_len,
       round(fwd_ratio, 2) AS fwd_naive_over_flash,
       round(bwd_ratio, 2) AS bwd_naive_over_flash,
       round(total_ratio, 2) AS total_naive_over_flash,
       round(flash_gflops, 1) AS flash_fwd_gflops,
       round(matmul_gflops, 1) AS matmul_gflops,
       round(flash_over_matmul, 2) AS flash_fwd_over_matmul,
       round(mem_ratio, 1) AS mem_naive_over_flash,
       round(naive_mib, 1) AS naive_mib, round(flash_mib, 1) AS flash_mib
FROM per_run
UNION ALL
SELECT 'median of ' || max(runs), seq_len,
       round(avg(CASE WHEN k_fwd IN ((runs + 1) / 2, (runs + 2) / 2) THEN fwd_ratio END), 2),
       round(avg(CASE WHEN k_bwd IN ((runs + 1) / 2, (runs + 2) / 2) THEN bwd_ratio END), 2),
       round(avg(CASE WHEN k_total IN ((runs + 1) / 2, (runs + 2) / 2) THEN total_ratio END), 2),
       NULL, NULL,
       round(avg(CASE WHEN k_rate IN ((runs + 1) / 2, (runs + 2) / 2) THEN flash_over_matmul END), 2),
       round(avg(CASE WHEN k_mem IN ((runs + 1) / 2, (runs + 2) / 2) THEN mem_ratio END), 1),
       NULL, NULL
FROM ranked GROUP BY seq_len
UNION ALL
SELECT 'min..max', seq_len,
       round(min(fwd_ratio), 2) || '..' || round(max(fwd_ratio), 2),
       round(min(bwd_ratio), 2) || '..' || round(max(bwd_ratio), 2),
       round(min(total_ratio), 2) || '..' || round(max(total_ratio), 2),
       NULL, NULL,
       round(min(flash_over_matmul), 2) || '..' || round(max(flash_over_matmul), 2),
       round(min(mem_ratio), 1) || '..' || round(max(mem_ratio), 1),
       NULL, NULL
FROM per_run GROUP BY seq_len;
