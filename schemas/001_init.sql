-- 001_init.sql: the benchdb data model (DESIGN "The database"): systems, runs, cases, samples.
-- Times are ISO 8601 UTC text ("2026-11-21T13:45:01.123Z"); durations are integer nanoseconds;
-- memory is integer bytes. Applied by db/ at open time; PRAGMA user_version tracks the level.

-- One row per distinct machine + build, deduplicated by fingerprint (sha256 of the fields below).
CREATE TABLE systems (
  id              INTEGER PRIMARY KEY,
  fingerprint     TEXT NOT NULL UNIQUE,
  hostname        TEXT NOT NULL,
  os              TEXT,      -- e.g. "Debian GNU/Linux 12 (bookworm)"
  kernel          TEXT,      -- uname -sr
  arch            TEXT,      -- uname -m
  cpu_model       TEXT,
  cpu_cores       INTEGER,   -- physical cores
  cpu_threads     INTEGER,   -- online logical CPUs
  cpu_flags       TEXT,      -- the SIMD flags that matter (avx2 avx512f avx512_bf16 amx ...)
  mem_bytes       INTEGER,
  gpu_name        TEXT,      -- NULL when no GPU was visible
  gpu_count       INTEGER NOT NULL DEFAULT 0,
  gpu_mem_bytes   INTEGER,
  gpu_sm_count    INTEGER,
  gpu_cc          TEXT,      -- compute capability "9.0"
  gpu_clock_mhz   INTEGER,
  gpu_mem_clock_mhz INTEGER,
  driver_version  TEXT,
  cuda_runtime    TEXT,
  cudnn_version   TEXT,
  cublas_version  TEXT,
  blas            TEXT,      -- e.g. "oneDNN 2.6.3 (...)"
  compiler        TEXT,
  build_flags     TEXT,
  first_seen      TEXT NOT NULL
);

-- One row per `runner run`.
CREATE TABLE runs (
  id            INTEGER PRIMARY KEY,
  uuid          TEXT NOT NULL UNIQUE,   -- stable across merged databases
  system_id     INTEGER NOT NULL REFERENCES systems(id),
  started_at    TEXT NOT NULL,
  ended_at      TEXT,
  status        TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
  git_commit    TEXT,                   -- NULL when built outside a git checkout
  git_dirty     INTEGER,                -- 1 when the source had uncommitted changes
  git_branch    TEXT,
  tool_version  TEXT NOT NULL,
  command_line  TEXT NOT NULL,
  sweep_path    TEXT,
  sweep_name    TEXT,
  sweep_text    TEXT,                   -- the whole sweep file as run
  sweep_hash    TEXT,                   -- sha256 of sweep_text
  label         TEXT,
  env           TEXT                    -- JSON object of the environment variables that matter
);

-- One row per benchmark case of a run (finished cases only: a case is written in one transaction).
CREATE TABLE cases (
  id              INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  ord             INTEGER NOT NULL,     -- order in the expanded sweep, 0-based
  suite           TEXT NOT NULL,
  impl            TEXT NOT NULL,
  device          TEXT NOT NULL,
  dtype           TEXT NOT NULL,
  pass            TEXT NOT NULL,
  batch_size      INTEGER,
  heads           INTEGER,
  seq_len         INTEGER,              -- attention: sequence length; e2e: context_length
  head_dim        INTEGER,
  causal          INTEGER,
  model           TEXT,                 -- e2e preset name
  params          TEXT NOT NULL,        -- canonical JSON of every parameter, keys sorted
  case_key        TEXT NOT NULL,        -- equal for the same benchmark across runs
  name            TEXT NOT NULL,        -- short human label
  warmup          INTEGER NOT NULL,
  iters           INTEGER NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'oom', 'error', 'unsupported', 'skipped')),
  reason          TEXT,                 -- why, for every status but ok
  max_diff        REAL,                 -- validation: max |impl - float64 reference|
  tolerance       REAL,
  mem_limit       INTEGER,              -- bytes the case was allowed, NULL = none
  param_bytes     INTEGER,
  peak_fwd_bytes  INTEGER,              -- peak after the forward phase
  peak_bwd_bytes  INTEGER,              -- peak after the backward phase
  peak_bytes      INTEGER,              -- peak overall (for oom: the bytes the case needed)
  flops_fwd       REAL,                 -- per iteration
  flops_bwd       REAL,
  flops_opt       REAL,
  bytes_fwd       REAL,                 -- minimum bytes moved per iteration
  bytes_bwd       REAL,
  bytes_opt       REAL,
  started_at      TEXT,
  elapsed_ns      INTEGER,              -- wall time of the whole case (setup and validation included)
  UNIQUE (run_id, ord)
);

-- Every timed iteration, warm-up ones included (iter < cases.warmup).
CREATE TABLE samples (
  case_id  INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  phase    TEXT NOT NULL CHECK (phase IN ('fwd', 'bwd', 'opt')),
  iter     INTEGER NOT NULL,            -- 0-based; warm-up iterations first
  ns       INTEGER NOT NULL,
  PRIMARY KEY (case_id, phase, iter)
) WITHOUT ROWID;
