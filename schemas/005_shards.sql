-- 005_shards.sql: runs that belong together. The shards of one sweep (`runner run --shard I/N`,
-- e.g. the tasks of a Slurm job array) share a group id; each records its slice. NULL for a run
-- of a whole sweep. `report --run GROUP` selects every shard of a group (the latest run of each
-- slice). Runs keep their uuid, so the shards' databases merge (`runner merge`) without clashes.

ALTER TABLE runs ADD COLUMN group_id TEXT;         -- shared by the shards of one sweep
ALTER TABLE runs ADD COLUMN shard_index INTEGER;   -- 0-based slice of the sweep's cases
ALTER TABLE runs ADD COLUMN shard_count INTEGER;   -- how many slices the sweep was cut into
CREATE INDEX runs_by_group ON runs (group_id);
