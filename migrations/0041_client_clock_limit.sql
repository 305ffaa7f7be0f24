-- A client's sandbox clock may run at most 100 years (36,525 days) ahead of the wall clock, as the
-- advance checks (clockOffsetMaxSeconds in src/modules/sandbox/clock/clock.service.ts): past the
-- year 9999 the client's dates could no longer be stored, and a batch that holds one (the request
-- log writes every client's rows together) would fail for every client in it. NOT VALID: a data
-- folder whose clock is already further ahead still starts; only new offsets are checked.

ALTER TABLE clients ADD CONSTRAINT clients_clock_offset_limit CHECK (clock_offset_ms <= 3155760000000) NOT VALID;
