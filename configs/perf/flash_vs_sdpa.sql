-- configs/perf/flash_vs_sdpa.sql: TFLOP/s of flash and cuDNN SDPA side by side, per shape, forward
-- and backward, from the latest run of configs/flash_vs_sdpa.yaml in the database:
--   sqlite3 -header -column attn.db < configs/perf/flash_vs_sdpa.sql
-- Means over measured iterations (warm-up excluded), as `report` shows them. FLOPs per forward
-- are 4·B·H·S²·D (halved when causal), backward 2.5×. fwd_ratio = flash / sdpa throughput (the
-- target: >= 0.7 at seq_len >= 4096, head_dim 64 and 128, bfloat16). The last query is the
-- target's summary: the worst and the median forward ratio over those shapes.
CREATE TEMP VIEW pair AS
WITH run AS (SELECT max(id) AS id FROM runs),
m AS (
  SELECT c.impl, c.dtype, c.causal, c.batch_size AS b, c.heads AS h, c.seq_len AS s, c.head_dim AS d,
         c.flops_fwd, c.flops_bwd,
         (SELECT avg(ns) FROM samples x WHERE x.case_id = c.id AND x.phase = 'fwd' AND x.iter >= c.warmup) AS fwd_ns,
         (SELECT avg(ns) FROM samples x WHERE x.case_id = c.id AND x.phase = 'bwd' AND x.iter >= c.warmup) AS bwd_ns
  FROM cases c, run WHERE c.run_id = run.id AND c.suite = 'attention' AND c.status = 'ok')
SELECT f.dtype, f.causal, f.b, f.h, f.s, f.d,
       f.flops_fwd / f.fwd_ns / 1e3 AS flash_fwd_tflops, p.flops_fwd / p.fwd_ns / 1e3 AS sdpa_fwd_tflops,
       f.flops_bwd / f.bwd_ns / 1e3 AS flash_bwd_tflops, p.flops_bwd / p.bwd_ns / 1e3 AS sdpa_bwd_tflops,
       p.fwd_ns / f.fwd_ns AS fwd_ratio, p.bwd_ns / f.bwd_ns AS bwd_ratio
FROM m f JOIN m p ON p.impl = 'sdpa' AND f.impl = 'flash' AND p.dtype = f.dtype AND p.causal = f.causal
 AND p.b = f.b AND p.h = f.h AND p.s = f.s AND p.d = f.d;

SELECT dtype, causal, b, h, s, d,
       round(flash_fwd_tflops, 1) AS flash_fwd, round(sdpa_fwd_tflops, 1) AS sdpa_fwd, round(fwd_ratio, 2) AS fwd_ratio,
       round(flash_bwd_tflops, 1) AS flash_bwd, round(sdpa_bwd_tflops, 1) AS sdpa_bwd, round(bwd_ratio, 2) AS bwd_ratio
FROM pair ORDER BY dtype, causal, d, s, b;

WITH r AS (SELECT fwd_ratio AS ratio FROM pair WHERE dtype = 'bfloat16' AND s >= 4096 AND d IN (64, 128))
SELECT count(*) AS shapes, round(min(ratio), 2) AS worst_fwd_ratio,
       round((SELECT ratio FROM r ORDER BY ratio LIMIT 1 OFFSET (SELECT count(*) FROM r) / 2), 2) AS median_fwd_ratio,
       sum(ratio >= 0.7) AS shapes_at_target
FROM r;
