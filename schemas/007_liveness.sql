-- 007_liveness.sql: who is running a run, so that one whose runner died (kill -9, a crash, a lost
-- machine) can be told from one that is going: the runner's host and pid, and a heartbeat it
-- refreshes between iterations (at most every 30 s) and after every case. NULL for runs stored
-- before this schema. `report runs` shows a `running` run whose runner is gone as `abandoned`;
-- `runner close RUN` ends it (`interrupted`) and `runner run SWEEP --resume RUN` continues it.

ALTER TABLE runs ADD COLUMN host TEXT;          -- gethostname() of the runner
ALTER TABLE runs ADD COLUMN pid INTEGER;        -- its process id on that host
ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;  -- ISO 8601 UTC, like started_at
