-- configs/perf/auto_cpu.sql: what docs/performance.md ("iters: auto") reports of a database
-- written by `runner run configs/perf/auto_cpu.yaml --repeat 3` (every run in the file):
--   sqlite3 -header -column auto.db < configs/perf/auto_cpu.sql
-- Per case: the measured iterations and stop reason of each run, each run's median of the
-- iteration time (its phases summed, warm-up excluded; the statistic iters: auto makes precise),
-- and the standard deviation of those medians relative to their mean (between runs).
WITH it AS (
  SELECT c.run_id, c.ord, c.name, c.iters, c.stop_reason, s.iter, sum(s.ns) AS ns
  FROM cases c JOIN samples s ON s.case_id = c.id
  WHERE c.status = 'ok' AND s.iter >= c.warmup
  GROUP BY c.id, s.iter),
ranked AS (
  SELECT *, row_number() OVER (PARTITION BY run_id, ord ORDER BY ns) AS k,
         count(*) OVER (PARTITION BY run_id, ord) AS n
  FROM it),
med AS (
  SELECT run_id, ord, name, iters, stop_reason, avg(ns) / 1e6 AS ms
  FROM ranked WHERE k IN ((n + 1) / 2, (n + 2) / 2) GROUP BY run_id, ord)
SELECT name,
       group_concat(iters || ' ' || stop_reason, ', ') AS iterations_and_stop,
       group_concat(printf('%.3f', ms), ' / ') AS median_ms,
       printf('%.2f%%', 100 * sqrt(max(avg(ms * ms) - avg(ms) * avg(ms), 0) * count(*) / (count(*) - 1)) / avg(ms))
         AS sd_between_runs
FROM med GROUP BY ord ORDER BY ord;
