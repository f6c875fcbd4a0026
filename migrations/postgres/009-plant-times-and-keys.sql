-- Plants gain the times of their create and of their last change, and name_key, the name's search key (Unicode
-- NFKC, then lower-cased as JavaScript's toLowerCase does) that GET /plants?q= matches and sort=name orders by.
-- Times are RFC 3339 text in UTC with milliseconds, as the service writes them (2026-11-27T09:41:07.250Z): both
-- stores then hold and answer the same bytes, and text of one width orders as the times do (COLLATE "C": byte
-- order, which is code point order, as SQLite compares). Events gain the plant's times and, for an edit, the name
-- it replaced (prev_name; a delete's event now keeps the plant's name), so a stream filtered by a search sees a
-- plant leave the search as well as enter it.
--
-- PostgreSQL's lower() follows the database's locale, not the service's Unicode rules, so the key stays NULL here;
-- the service fills every NULL key when it opens the store, before it serves (src/plants/plant.search-keys.ts),
-- found by the partial index plants_unkeyed. The columns are written by the service on every change.
ALTER TABLE plants ADD COLUMN created_at TEXT COLLATE "C", ADD COLUMN updated_at TEXT COLLATE "C", ADD COLUMN name_key TEXT COLLATE "C";
ALTER TABLE plant_events ADD COLUMN created_at TEXT COLLATE "C", ADD COLUMN updated_at TEXT COLLATE "C", ADD COLUMN prev_name TEXT;
CREATE INDEX plants_unkeyed ON plants (id) WHERE name_key IS NULL;

-- Unix ms as the service writes a time; exact (the interval is counted in whole microseconds).
CREATE FUNCTION plant_time_text(ms BIGINT) RETURNS TEXT
LANGUAGE sql IMMUTABLE AS $$ SELECT to_char(timestamp '1970-01-01' + ms * interval '1 millisecond', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$;

-- Existing plants and events take their times from the events still kept, as migrations/sqlite/008 does: a
-- plant's updatedAt is the time of the event at its version, its createdAt the time of its last 'created' event
-- at or before that; what no kept event tells gets the time of the oldest event kept (every pruned change was at
-- or before it), or this migration's time when none is kept.
CREATE TEMP TABLE migration_floor ON COMMIT DROP AS
SELECT coalesce((SELECT plant_time_text(min(at)) FROM plant_events), plant_time_text((extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)) AS floor;
CREATE INDEX plant_events_by_plant ON plant_events (plant_id, pos);

UPDATE plant_events e SET
  updated_at = CASE WHEN kind <> 'deleted' THEN plant_time_text(at) END,
  created_at = CASE WHEN kind <> 'deleted' THEN coalesce(
    (SELECT plant_time_text(c.at) FROM plant_events c
     WHERE c.plant_id = e.plant_id AND c.kind = 'created' AND c.pos <= e.pos ORDER BY c.pos DESC LIMIT 1),
    (SELECT floor FROM migration_floor)) END,
  prev_name = CASE WHEN kind = 'updated' THEN
    (SELECT b.name FROM plant_events b WHERE b.plant_id = e.plant_id AND b.pos < e.pos ORDER BY b.pos DESC LIMIT 1) END,
  name = CASE WHEN kind = 'deleted' THEN
    (SELECT b.name FROM plant_events b WHERE b.plant_id = e.plant_id AND b.pos < e.pos ORDER BY b.pos DESC LIMIT 1) ELSE name END;

UPDATE plants p SET
  updated_at = coalesce((SELECT e.updated_at FROM plant_events e WHERE e.pos = p.version), (SELECT floor FROM migration_floor)),
  created_at = coalesce((SELECT e.created_at FROM plant_events e WHERE e.pos = p.version), (SELECT floor FROM migration_floor));

DROP INDEX plant_events_by_plant;

-- The write of one group commit, as migrations/postgres/008's plants_write, with the new columns: each put plant's
-- times and search key, each event's times and the name an edit replaced. An overload: the one of 008 stays for
-- replicas of the previous version during a rolling upgrade, redefined below.
CREATE FUNCTION plants_write(
  at_ms BIGINT,
  read_ids BIGINT[], read_versions BIGINT[],
  put_ids BIGINT[], put_names TEXT[], put_tags TEXT[], put_created_ats TEXT[], put_updated_ats TEXT[], put_name_keys TEXT[],
  put_offsets BIGINT[],
  removed_ids BIGINT[],
  event_kinds TEXT[], event_ids BIGINT[], event_names TEXT[], event_tags TEXT[], event_created_ats TEXT[], event_updated_ats TEXT[],
  event_prev_names TEXT[], event_prev_tags TEXT[]
) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  base BIGINT;
  n INT := coalesce(array_length(event_ids, 1), 0);
BEGIN
  base := plant_positions_take(at_ms);
  IF EXISTS (
    SELECT 1 FROM unnest(read_ids, read_versions) AS r(id, version)
    WHERE r.version IS DISTINCT FROM (SELECT p.version FROM plants p WHERE p.id = r.id)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO plants (id, name, tag, created_at, updated_at, name_key, version)
  SELECT u.id, u.name, u.tag, u.created_at, u.updated_at, u.name_key, base + u.offs
  FROM unnest(put_ids, put_names, put_tags, put_created_ats, put_updated_ats, put_name_keys, put_offsets) AS u(id, name, tag, created_at, updated_at, name_key, offs)
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, created_at = EXCLUDED.created_at,
    updated_at = EXCLUDED.updated_at, name_key = EXCLUDED.name_key, version = EXCLUDED.version;
  IF cardinality(removed_ids) > 0 THEN
    DELETE FROM plants WHERE id = ANY (removed_ids);
  END IF;
  INSERT INTO plant_events (pos, kind, plant_id, name, tag, created_at, updated_at, prev_name, prev_tag, at)
  SELECT base + e.i, e.kind, e.id, e.name, e.tag, e.created_at, e.updated_at, e.prev_name, e.prev_tag, at_ms
  FROM unnest(event_kinds, event_ids, event_names, event_tags, event_created_ats, event_updated_ats, event_prev_names, event_prev_tags)
    WITH ORDINALITY AS e(kind, id, name, tag, created_at, updated_at, prev_name, prev_tag, i);
  IF n > 0 THEN
    UPDATE plant_event_counter SET last_pos = base + n;
    PERFORM pg_notify('plant_events', (base + n)::TEXT);
  END IF;
  RETURN base;
END
$$;

-- 008's plants_write, for replicas of the previous version during the roll: the plants it writes get the batch's
-- time as updatedAt (and createdAt when new) and a NULL search key, which a replica of this version fills when it
-- next opens the store (docs/operations.md: finish the roll, then restart one replica, before relying on search).
CREATE OR REPLACE FUNCTION plants_write(
  at_ms BIGINT,
  read_ids BIGINT[], read_versions BIGINT[],
  put_ids BIGINT[], put_names TEXT[], put_tags TEXT[], put_offsets BIGINT[],
  removed_ids BIGINT[],
  event_kinds TEXT[], event_ids BIGINT[], event_names TEXT[], event_tags TEXT[], event_prev_tags TEXT[]
) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  base BIGINT;
  n INT := coalesce(array_length(event_ids, 1), 0);
  stamp TEXT := plant_time_text(at_ms);
BEGIN
  base := plant_positions_take(at_ms);
  IF EXISTS (
    SELECT 1 FROM unnest(read_ids, read_versions) AS r(id, version)
    WHERE r.version IS DISTINCT FROM (SELECT p.version FROM plants p WHERE p.id = r.id)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO plants (id, name, tag, created_at, updated_at, name_key, version)
  SELECT u.id, u.name, u.tag, stamp, stamp, NULL, base + u.offs FROM unnest(put_ids, put_names, put_tags, put_offsets) AS u(id, name, tag, offs)
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, updated_at = stamp, name_key = NULL, version = EXCLUDED.version;
  IF cardinality(removed_ids) > 0 THEN
    DELETE FROM plants WHERE id = ANY (removed_ids);
  END IF;
  INSERT INTO plant_events (pos, kind, plant_id, name, tag, created_at, updated_at, prev_tag, at)
  SELECT base + e.i, e.kind, e.id, e.name, e.tag,
    CASE WHEN e.kind <> 'deleted' THEN (SELECT p.created_at FROM plants p WHERE p.id = e.id) END,
    CASE WHEN e.kind <> 'deleted' THEN stamp END, e.prev_tag, at_ms
  FROM unnest(event_kinds, event_ids, event_names, event_tags, event_prev_tags) WITH ORDINALITY AS e(kind, id, name, tag, prev_tag, i);
  IF n > 0 THEN
    UPDATE plant_event_counter SET last_pos = base + n;
    PERFORM pg_notify('plant_events', (base + n)::TEXT);
  END IF;
  RETURN base;
END
$$;
