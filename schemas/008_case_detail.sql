-- 008_case_detail.sql: what exactly ran, and what ended the measurement.
--
-- impl_info: a JSON object a workload or peer reports about the code that ran the case, beyond
--   its impl name: e.g. for cuDNN SDPA the graph built (unified SDPA node or composite) and the
--   engine's global index; for the PyTorch peer its version, BLAS/oneDNN versions and threads.
--   NULL when the workload reports nothing (every case stored before this schema).
-- stop_reason: why the measurement loop stopped: 'iters' (the fixed count of the sweep),
--   'precision' (iters: auto reached its target relative standard error), 'max_time' or
--   'max_iters' (iters: auto ran out of budget first). NULL for cases that were not measured
--   (not ok) and for cases stored before this schema.
ALTER TABLE cases ADD COLUMN impl_info TEXT;
ALTER TABLE cases ADD COLUMN stop_reason TEXT;
