-- GET /plants?q=: a trigram index on the search key, so a q of 3 or more characters reads the plants whose key
-- holds every trigram of it instead of every plant (pg_trgm, a contrib extension; trusted since PostgreSQL 13, so
-- a database owner may create it: docs/operations.md). The list asks `name_key LIKE '%q%'` for the index and keeps
-- `strpos(name_key, q) > 0` as the exact test (src/plants/plant.list.postgres.ts), so the index only narrows:
-- pg_trgm's own lower-casing and word splitting by the database's locale can widen what it reads, never change
-- an answer. GIN's pending list (fastupdate, on by default) keeps a create's cost to an append.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX plants_by_name_trigram ON plants USING gin (name_key gin_trgm_ops);
