-- configs/perf/torch_sdpa_gpu.sql: per shape of a torch-SDPA GPU run (configs/torch_sdpa_gpu.yaml or
-- a slice of it, configs/perf/torch_sdpa_gpu_*.yaml), the median forward+backward time (ms, CUDA
-- events, measured iterations) of benchdb's flash, benchdb's cuDNN SDPA (sdpa) and each torch
-- backend, torch's fastest backend against cuDNN SDPA, and the worst check (max_diff / tolerance)
-- of every case of the shape. Every run of the database, each shape once per run.
with r as (select id from runs),
c as (select c.id, c.run_id, c.dtype, c.batch_size b, c.seq_len s, c.head_dim d, c.causal, c.warmup, c.max_diff, c.tolerance,
             case when c.impl = 'torch_sdpa' then 'torch_' || json_extract(c.params, '$.backend') else c.impl end impl
      from cases c where c.run_id in (select id from r) and c.status = 'ok'),
it as (select c.id, s.iter, sum(s.ns) ns from c join samples s on s.case_id = c.id
       where s.iter >= c.warmup group by c.id, s.iter),
ranked as (select id, ns, row_number() over (partition by id order by ns) k, count(*) over (partition by id) n from it),
med as (select id, avg(ns) / 1e6 ms from ranked where k in ((n + 1) / 2, (n + 2) / 2) group by id),
m as (select c.*, med.ms from c join med using (id)),
shape as (select run_id, dtype, b, s, d, causal,
  max(case impl when 'flash' then ms end) flash,
  max(case impl when 'sdpa' then ms end) cudnn_sdpa,
  max(case impl when 'torch_auto' then ms end) t_auto,
  max(case impl when 'torch_flash' then ms end) t_flash,
  max(case impl when 'torch_efficient' then ms end) t_eff,
  max(case impl when 'torch_cudnn' then ms end) t_cudnn,
  max(case impl when 'torch_math' then ms end) t_math,
  max(max_diff / tolerance) worst_check
  from m group by run_id, dtype, b, s, d, causal)
select run_id run, dtype, b, s, d, causal, round(flash, 3) flash, round(cudnn_sdpa, 3) sdpa, round(t_auto, 3) t_auto,
       round(t_flash, 3) t_flash, round(t_eff, 3) t_eff, round(t_cudnn, 3) t_cudnn, round(t_math, 3) t_math,
       round(cudnn_sdpa / min(coalesce(t_auto, 1e9), coalesce(t_flash, 1e9), coalesce(t_eff, 1e9), coalesce(t_cudnn, 1e9)), 2) sdpa_vs_best_torch,
       round(worst_check, 3) worst_check
from shape order by run_id, dtype, causal, b, s, d;
