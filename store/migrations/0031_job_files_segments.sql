-- A document the database keeps has its bytes in a segment file beside it
-- (store/docseg.go, docs/decisions.md "Documents in segment files"): the
-- row's data is empty and seg, seg_off, seg_len and seg_crc (CRC-32C) say
-- where they are. Rows written before keep their bytes in data (seg NULL).
-- The partial index finds whether a segment is still named by any row
-- before it is removed.
ALTER TABLE job_files ADD COLUMN seg INTEGER;
ALTER TABLE job_files ADD COLUMN seg_off INTEGER;
ALTER TABLE job_files ADD COLUMN seg_len INTEGER;
ALTER TABLE job_files ADD COLUMN seg_crc INTEGER;
CREATE INDEX job_files_seg ON job_files(seg) WHERE seg IS NOT NULL;
