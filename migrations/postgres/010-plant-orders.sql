-- GET /plants?sort=…: one index per order, in the order's full key, so every page, first or deep, ascending or
-- descending (a backward scan), is a range scan from the cursor's keys. Text compares COLLATE "C" (byte order of
-- UTF-8: code point order, as SQLite compares): name_key, created_at and updated_at are COLLATE "C" columns
-- (migrations/postgres/009); name is not, so its index column says it, as the list's ORDER BY and row
-- comparison do (src/plants/plant.list.postgres.ts). Built without CONCURRENTLY (the runner applies a file in one
-- transaction): on a large store, writes wait while each index builds (docs/operations.md).
CREATE INDEX plants_by_name ON plants (name_key, name COLLATE "C", id);
CREATE INDEX plants_by_created ON plants (created_at, id);
CREATE INDEX plants_by_updated ON plants (updated_at, id);
