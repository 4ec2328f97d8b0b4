-- 009_cpu_wait.sql: whether the machine was busy with something else while a case was measured.
--
-- cpu_wait: the share of the measured iterations' time that the runner's threads were runnable
--   but waiting for a CPU (summed over its threads from /proc/self/task/*/schedstat: wait /
--   (run + wait)). About 0 on a quiet machine; 0.5 for a single-threaded case that shared its
--   core with one busy process. `report regress` will not call a case slower or faster when the
--   two sides' shares differ enough to explain the change. NULL when unknown: peers (another
--   process), a kernel without sched_info, cases not measured, and cases stored before schema 9.
ALTER TABLE cases ADD COLUMN cpu_wait REAL;
