-- 010_run_noise.sql: the noise between runs, kept with the data (report/noise.h; docs/performance.md,
-- "Measurement validity"). A run's statistic for a case is y = ln(median of its measured iterations);
-- runs of one session (a `runner run --repeat N` group, the shards of a sweep; a run without a group
-- is a session of its own) agree more closely than runs made at different times. Per system, case
-- key, series and session the runner stores the sufficient statistics of y: how many runs, their
-- mean and their sum of squares about it. The verdicts of `report` (regress, compare across runs,
-- history steps, nodes) read them as the history of the system's noise; runs not folded yet (stored
-- before this schema, merged from another file) are read from their samples instead, and
-- `runner noise` folds them.

CREATE TABLE noise_sessions (
  system_id  INTEGER NOT NULL REFERENCES systems(id),
  case_key   TEXT NOT NULL,
  phase      TEXT NOT NULL CHECK (phase IN ('fwd', 'bwd', 'opt', 'total')),  -- total: per-iteration sum
  session    TEXT NOT NULL,      -- runs.group_id, or 'run:' || runs.uuid
  code       TEXT NOT NULL,      -- what ran: 'COMMIT[+dirty]/SWEEP_HASH' ('?' unknown); sessions of
                                 -- one code at different times are replicates, across codes a
                                 -- difference may be a real change
  runs       INTEGER NOT NULL,   -- runs folded into the row
  mean_log   REAL NOT NULL,      -- mean of their ln(median ns)
  ss_log     REAL NOT NULL,      -- sum of squares of their ln(median ns) about mean_log
  first_at   TEXT NOT NULL,      -- started_at of the session's first folded run
  last_at    TEXT NOT NULL,      -- ... and of its last
  PRIMARY KEY (system_id, case_key, phase, session)
);

-- The runs folded into noise_sessions (each once; complete runs only).
CREATE TABLE noise_runs (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE
);

-- Per system, case key and series: the spread between runs of one session (within_var, with
-- within_df degrees of freedom; variances of ln(median), so 0.0016 is a spread of about 4%) and the
-- plain variance of the sessions' means (between_sessions_var; the verdicts use a robust estimate
-- from consecutive sessions instead, which a real change between sessions does not inflate).
CREATE VIEW run_noise AS
SELECT system_id, case_key, phase,
       count(*) AS sessions,
       sum(runs) AS runs,
       sum(runs) - count(*) AS within_df,
       sum(ss_log) / nullif(sum(runs) - count(*), 0) AS within_var,
       (sum(mean_log * mean_log) - sum(mean_log) * sum(mean_log) / count(*))
         / nullif(count(*) - 1, 0) AS between_sessions_var,
       max(last_at) AS last_at
FROM noise_sessions
GROUP BY system_id, case_key, phase;
