-- GET /plants?sort=…: one index per order, so every page, first or deep, ascending or descending, is a range
-- scan of the index from the cursor's keys. SQLite appends the rowid (our id) to every index entry, so each is
-- already in the order's full key: (name_key, name, id), (created_at, id), (updated_at, id). Text compares by
-- the BINARY collation (memcmp of UTF-8: code point order), the order the service promises on both stores.
CREATE INDEX plants_by_name ON plants (name_key, name);
CREATE INDEX plants_by_created ON plants (created_at);
CREATE INDEX plants_by_updated ON plants (updated_at);
