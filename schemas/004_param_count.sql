-- 004_param_count.sql: how many parameters a case's model has (e2e; the runner's own count,
-- model_param_count), so that reports can show it without knowing the model's formula. NULL for
-- kernels and for cases stored before this schema.

ALTER TABLE cases ADD COLUMN param_count INTEGER;
