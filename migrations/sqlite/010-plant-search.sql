-- GET /plants?q=: an FTS5 trigram index of the search key, so a q of 3 or more characters reads the plants whose
-- key holds it instead of every plant. Contentless (the key lives in plants.name_key) with deletes by rowid, the
-- plant's id; case_sensitive, since the key is already lower-cased by the service's rules. The list keeps
-- instr(name_key, q) as the exact test, so the index only narrows.
--
-- Written behind the commits, never by them: a trigger would cost every create a fifth more instructions. The
-- service's indexer (src/plants/plant.search.sqlite.ts) reads the change events after indexed_pos and re-indexes
-- those plants; a search reads the index and also the plants of the events after indexed_pos, so its answer is
-- never behind the rows. build_pos/build_after_id: a build from the plants table in progress (after this
-- migration, or when the events the indexer needs were pruned), chunk by chunk; searches scan until it is done.
CREATE VIRTUAL TABLE plants_search USING fts5(name_key, content='', contentless_delete=1, tokenize='trigram case_sensitive 1');
CREATE TABLE plants_search_state (
  only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
  indexed_pos INTEGER,
  build_pos INTEGER,
  build_after_id INTEGER
) STRICT;
INSERT INTO plants_search_state (only_row, indexed_pos, build_pos, build_after_id) VALUES (1, NULL, NULL, NULL);
