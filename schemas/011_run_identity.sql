-- 011_run_identity.sql: what a resumed run must keep. `runner run --resume RUN` continues a run
-- with the run's own shard, group, label and memory limit, not the new command line's; these
-- columns hold what the first runner applied, and what each resume did.
--
-- mem_limit: the bytes the runner gave its cases: --mem-limit (every case: mem_limit_source
--   'option'), or the default share of the memory available when the run started (CPU cases
--   without a mem_limit of their own: 'default'). NULL for runs stored before schema 11.
-- resumes: one line per `runner run --resume` of this run: when, the command line, and any value
--   that differed from the run's and was accepted with --force. NULL when never resumed.
ALTER TABLE runs ADD COLUMN mem_limit INTEGER;
ALTER TABLE runs ADD COLUMN mem_limit_source TEXT CHECK (mem_limit_source IN ('option', 'default'));
ALTER TABLE runs ADD COLUMN resumes TEXT;
