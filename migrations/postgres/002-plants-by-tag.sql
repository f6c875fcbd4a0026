-- The list by tag walks this index in id order (the same index as migrations/sqlite/002-plants-by-tag.sql).
CREATE INDEX plants_by_tag ON plants (tag, id);
