-- Plants gain the times of their create and of their last change, and name_key, the name's search key (Unicode
-- NFKC, then lower-cased as JavaScript's toLowerCase does) that GET /plants?q= matches and sort=name orders by.
-- Times are RFC 3339 text in UTC with milliseconds, as the service writes them (2026-11-27T09:41:07.250Z): both
-- stores then hold and answer the same bytes, and text of one width orders as the times do. Events gain the
-- plant's times and, for an edit, the name it replaced (prev_name; a delete's event now keeps the plant's name),
-- so a stream filtered by a search sees a plant leave the search as well as enter it.
--
-- A database cannot compute the search key by the service's Unicode rules, so it stays NULL here; the service
-- fills every NULL key when it opens the store, before it serves (src/plants/plant.search-keys.ts), found by the
-- partial index plants_unkeyed. The columns are written by the service on every change (NOT NULL in practice).
ALTER TABLE plants ADD COLUMN created_at TEXT;
ALTER TABLE plants ADD COLUMN updated_at TEXT;
ALTER TABLE plants ADD COLUMN name_key TEXT;
ALTER TABLE plant_events ADD COLUMN created_at TEXT;
ALTER TABLE plant_events ADD COLUMN updated_at TEXT;
ALTER TABLE plant_events ADD COLUMN prev_name TEXT;
CREATE INDEX plants_unkeyed ON plants (id) WHERE name_key IS NULL;

-- Existing plants and events take their times from the events still kept: a plant's updatedAt is the time of the
-- event at its version, its createdAt the time of its last 'created' event at or before that. What no kept event
-- tells gets the time of the oldest event kept (every pruned change was at or before it), or this migration's
-- time when none is kept. Unix ms becomes the text with integer arithmetic only, so no rounding can move it.
CREATE TEMP TABLE migration_floor AS
SELECT coalesce(
  (SELECT strftime('%Y-%m-%dT%H:%M:%S', min(at) / 1000, 'unixepoch') || printf('.%03dZ', min(at) % 1000) FROM plant_events),
  strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
) AS floor;
-- A plant's events by position; dropped below, once the backfill has used it.
CREATE INDEX plant_events_by_plant ON plant_events (plant_id, pos);

UPDATE plant_events SET
  updated_at = CASE WHEN kind <> 'deleted' THEN strftime('%Y-%m-%dT%H:%M:%S', at / 1000, 'unixepoch') || printf('.%03dZ', at % 1000) END,
  created_at = CASE WHEN kind <> 'deleted' THEN coalesce(
    (SELECT strftime('%Y-%m-%dT%H:%M:%S', c.at / 1000, 'unixepoch') || printf('.%03dZ', c.at % 1000)
     FROM plant_events c WHERE c.plant_id = plant_events.plant_id AND c.kind = 'created' AND c.pos <= plant_events.pos
     ORDER BY c.pos DESC LIMIT 1),
    (SELECT floor FROM migration_floor)) END;
UPDATE plant_events SET
  prev_name = (SELECT b.name FROM plant_events b WHERE b.plant_id = plant_events.plant_id AND b.pos < plant_events.pos ORDER BY b.pos DESC LIMIT 1)
WHERE kind = 'updated';
UPDATE plant_events SET
  name = (SELECT b.name FROM plant_events b WHERE b.plant_id = plant_events.plant_id AND b.pos < plant_events.pos ORDER BY b.pos DESC LIMIT 1)
WHERE kind = 'deleted';

UPDATE plants SET
  updated_at = coalesce((SELECT e.updated_at FROM plant_events e WHERE e.pos = plants.version), (SELECT floor FROM migration_floor)),
  created_at = coalesce((SELECT e.created_at FROM plant_events e WHERE e.pos = plants.version), (SELECT floor FROM migration_floor));

DROP INDEX plant_events_by_plant;
DROP TABLE migration_floor;
