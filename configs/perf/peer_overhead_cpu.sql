-- configs/perf/peer_overhead_cpu.sql: per peer of configs/perf/peer_overhead_cpu.yaml (its cases
-- run together, in sweep order), the wall time from the end of the cases before them to the end
-- of their last case (process start-ups, imports, validation, database writes: everything), the
-- time of their measured iterations (warm-up excluded), and the share outside them. Latest run.
with r as (select max(id) id from runs),
c as (select c.id, c.ord, c.impl, c.warmup,
             (julianday(c.started_at) - 2440587.5) * 86400e9 + c.elapsed_ns end_ns
      from cases c where c.run_id = (select id from r)),
blocks as (select impl, count(*) cases, min(ord) first_ord, max(end_ns) last_end from c group by impl),
span as (select b.impl, b.cases, b.last_end - coalesce(
                  (select max(end_ns) from c where c.ord < b.first_ord),
                  (select (julianday(started_at) - 2440587.5) * 86400e9 from runs where id = (select id from r))) wall_ns
         from blocks b),
measured as (select c.impl, sum(s.ns) ns from c join samples s on s.case_id = c.id
             where s.iter >= c.warmup group by c.impl)
select s.impl, s.cases, round(s.wall_ns / 1e9, 2) wall_s, round(m.ns / 1e9, 2) measured_s,
       round(100.0 * (1 - m.ns / s.wall_ns), 1) outside_pct
from span s join measured m using (impl) order by s.impl;
