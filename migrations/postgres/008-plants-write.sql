-- The write of one group commit, decided beforehand in TypeScript (src/plants/plant.write-rule.ts, from rows read
-- without a lock; src/plants/plant.write.postgres.ts): no rule of a plant write is here. It takes the feed's
-- counter (plant_positions_take, migrations/postgres/007), checks that each row the decisions rest on is still as
-- it was read (read_versions[i] NULL: no plant then), and only then writes, so the lock is held inside this one
-- statement and never across a round trip. Every writer of plants holds the counter while it writes, so the check
-- under it is exact. Returns the position the batch numbers after: plant put_ids[i] gets version base +
-- put_offsets[i], event i position base + i. NULL, and nothing written, when a row has changed since it was read;
-- the caller reads and decides again.
-- plants_change (migrations/postgres/005, 007) stays for replicas of an older version during a rolling upgrade;
-- this version no longer calls it.
CREATE FUNCTION plants_write(
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
BEGIN
  base := plant_positions_take(at_ms);
  -- Each row by its key (a subquery per id): a join's plan, cached for the session while the table was small,
  -- could scan the whole table on every batch.
  IF EXISTS (
    SELECT 1 FROM unnest(read_ids, read_versions) AS r(id, version)
    WHERE r.version IS DISTINCT FROM (SELECT p.version FROM plants p WHERE p.id = r.id)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO plants (id, name, tag, version)
  SELECT u.id, u.name, u.tag, base + u.offs FROM unnest(put_ids, put_names, put_tags, put_offsets) AS u(id, name, tag, offs)
  ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, version = EXCLUDED.version;
  IF cardinality(removed_ids) > 0 THEN
    DELETE FROM plants WHERE id = ANY (removed_ids);
  END IF;
  INSERT INTO plant_events (pos, kind, plant_id, name, tag, prev_tag, at)
  SELECT base + e.i, e.kind, e.id, e.name, e.tag, e.prev_tag, at_ms
  FROM unnest(event_kinds, event_ids, event_names, event_tags, event_prev_tags) WITH ORDINALITY AS e(kind, id, name, tag, prev_tag, i);
  IF n > 0 THEN
    UPDATE plant_event_counter SET last_pos = base + n;
    PERFORM pg_notify('plant_events', (base + n)::TEXT);
  END IF;
  RETURN base;
END
$$;
