-- GET /plants?tag=… pages by id within one tag. SQLite appends the rowid (our id) to every index entry, so
-- entries of one tag are already in id order and `tag = ? AND id > ? ORDER BY id` is a range scan.
-- (PostgreSQL needs the id spelled out: CREATE INDEX plants_by_tag ON plants (tag, id).)
CREATE INDEX plants_by_tag ON plants (tag);
