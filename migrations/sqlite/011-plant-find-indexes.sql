-- GET /plants by name and by search, without reading whole rows (issue 33, docs/decisions/api.md "The search index").
--
-- plants_by_name becomes covering: every column a page by name answers (name_key, name, id, tag, created_at,
-- updated_at), so a page is a range of index entries, not 101 row lookups scattered over the table. id is spelled
-- out third, where the order needs it: the rowid SQLite appends would come after tag and the times and break
-- ties of the name by tag.
--
-- plants_by_id_key, (id, name_key), is the id order with the search key alone: a q in id order and a count with q
-- test name_key on its narrow entries instead of whole rows, and read the rows of a page's matches only.
-- The rowid is the id, so its order is the table's.
DROP INDEX plants_by_name;
CREATE INDEX plants_by_name ON plants (name_key, name, id, tag, created_at, updated_at);
CREATE INDEX plants_by_id_key ON plants (id, name_key);
