-- 006_gpu_during_case.sql: what the GPU did while a case ran, read with NVML every 100 ms between
-- the case's start and end (CUDA cases on a machine with NVML; NULL otherwise, and for cases
-- stored before this schema). `report nodes` compares them across machines.

ALTER TABLE cases ADD COLUMN gpu_temp_c REAL;          -- hottest GPU temperature seen, degrees C
ALTER TABLE cases ADD COLUMN gpu_sm_clock_mhz INTEGER; -- lowest SM clock seen, MHz
ALTER TABLE cases ADD COLUMN gpu_throttle TEXT;        -- clock throttle reasons seen, comma-separated
                                                       -- (e.g. "sw_power_cap,hw_thermal"); '' none
