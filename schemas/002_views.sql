-- 002_views.sql: indexes for history queries and documented views for ad-hoc SQL
-- (see schemas/README.md). Views never change stored data.

CREATE INDEX cases_by_key ON cases (case_key);
CREATE INDEX runs_by_commit ON runs (git_commit);

-- Samples with their case and whether the iteration was warm-up.
CREATE VIEW sample_view AS
SELECT s.case_id, c.run_id, c.case_key, c.name, s.phase, s.iter, s.ns,
       s.iter < c.warmup AS is_warmup
FROM samples s JOIN cases c ON c.id = s.case_id;

-- Per case and phase, over measured (non-warm-up) iterations.
CREATE VIEW case_stats AS
SELECT c.id AS case_id, c.run_id, c.case_key, c.name, c.status, s.phase,
       count(*) AS n,
       avg(s.ns) AS mean_ns,
       sqrt(max(avg(s.ns * s.ns * 1.0) - avg(s.ns) * avg(s.ns), 0) * count(*) / max(count(*) - 1, 1)) AS std_ns,
       min(s.ns) AS min_ns,
       max(s.ns) AS max_ns
FROM cases c JOIN samples s ON s.case_id = c.id AND s.iter >= c.warmup
GROUP BY c.id, s.phase;

-- Runs with their machine and a count of cases per status.
CREATE VIEW run_view AS
SELECT r.id, r.uuid, r.started_at, r.ended_at, r.status, r.label, r.sweep_name,
       r.git_commit, r.git_dirty, r.git_branch, y.hostname,
       (SELECT count(*) FROM cases c WHERE c.run_id = r.id) AS cases,
       (SELECT count(*) FROM cases c WHERE c.run_id = r.id AND c.status = 'ok') AS ok,
       (SELECT count(*) FROM cases c WHERE c.run_id = r.id AND c.status <> 'ok') AS not_ok
FROM runs r JOIN systems y ON y.id = r.system_id;
