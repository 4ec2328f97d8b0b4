-- 003_memory_breakdown.sql: what a case's memory holds (e2e cases; NULL for kernels and for
-- cases that never got that far). Bytes, from the model's own allocations.

ALTER TABLE cases ADD COLUMN grad_bytes INTEGER;        -- float32 gradients of every parameter
ALTER TABLE cases ADD COLUMN optim_bytes INTEGER;       -- AdamW m and v
ALTER TABLE cases ADD COLUMN activation_bytes INTEGER;  -- what the forward keeps for the backward
ALTER TABLE cases ADD COLUMN workspace_bytes INTEGER;   -- backward scratch, tokens, tables
