-- GET /plants?sort=name: the name order's index carries every column a page answers (tag and the times as
-- INCLUDE columns; id, name and name_key are its keys), so a page is an index-only scan of neighbouring entries
-- instead of one heap page per plant at a random place in the table (docs/decisions/api.md, "The name order").
-- A page reads the heap only for the pages the visibility map does not mark all-visible, that is pages changed
-- since (auto)vacuum last passed. A member added to plants later must be added here too, or the scan reads the
-- heap again. Same name and key as migrations/postgres/010's index, built before the old one is dropped so the
-- order is served throughout; built without CONCURRENTLY (the runner applies a file in one transaction): on a
-- large store, writes wait while it builds (docs/operations.md).
CREATE INDEX plants_by_name_covering ON plants (name_key, name COLLATE "C", id) INCLUDE (tag, created_at, updated_at);
DROP INDEX plants_by_name;
ALTER INDEX plants_by_name_covering RENAME TO plants_by_name;
