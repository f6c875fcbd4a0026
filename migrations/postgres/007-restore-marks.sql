-- Restores. pg_restore (or COPY, or logical replication) brings back the counter row of migrations/postgres/005 as
-- it was when the dump was taken, while the database it came from may have handed out positions after that: as
-- events' ids and as plants' versions (ETags). Such a store must never hand them out again (docs/decisions/backups.md).
--
-- How a restored row is told apart: writer records the transaction that last wrote the row (a trigger stamps every
-- UPDATE), and PostgreSQL records the same transaction as the row's xmin. A row that pg_restore wrote has the xmin
-- of the restoring transaction and the writer of the dumped database: they differ. NULL means unknown: a store
-- that had handed out positions before this migration is treated as restored once, at its next write. A
-- point-in-time recovery or a file-level copy keeps the row as it was written, xmin included: it cannot be told
-- apart, and docs/backups.md says to call plant_positions_mark() after one.
ALTER TABLE plant_event_counter ADD COLUMN writer xid8;
UPDATE plant_event_counter SET writer = CASE WHEN last_pos = 0 THEN pg_current_xact_id() END;

CREATE FUNCTION plant_event_counter_stamp() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.writer := pg_current_xact_id();
  RETURN NEW;
END
$$;
CREATE TRIGGER plant_event_counter_stamp BEFORE UPDATE ON plant_event_counter FOR EACH ROW EXECUTE FUNCTION plant_event_counter_stamp();

-- Each row: the store, restored with restored_last as its last position, continued after mark (plant_positions_mark).
-- Positions strictly between the two were never written here, and a reader resuming from one gets a reset.
-- restored_at is Unix ms. pg_dump keeps these rows.
CREATE TABLE plant_event_restores (
  mark BIGINT PRIMARY KEY,
  restored_last BIGINT NOT NULL,
  restored_at BIGINT NOT NULL
);

-- Moves the counter past a restore mark: the greater of its last position + 1 and the time in microseconds since
-- 1970. The clock is the floor because the database the store was restored from cannot be read from here: a store
-- hands out far fewer than a million positions a second, so its positions stay below the time of any later restore.
-- Returns the mark; the next event is mark + 1. Called by plant_positions_take for a restored row, by plant-store
-- import for a store that never handed out a position, and by hand after a restore this store cannot see (docs/backups.md).
CREATE FUNCTION plant_positions_mark(at_ms BIGINT DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  kept BIGINT;
  mark BIGINT;
BEGIN
  SELECT c.last_pos INTO kept FROM plant_event_counter c FOR UPDATE;
  mark := greatest(kept + 1, (extract(epoch FROM clock_timestamp()) * 1000000)::BIGINT);
  INSERT INTO plant_event_restores (mark, restored_last, restored_at) VALUES (mark, kept, at_ms);
  UPDATE plant_event_counter SET last_pos = mark;
  RETURN mark;
END
$$;

-- The counter row, locked until the caller's transaction ends, and the position to number after. Every writer of
-- positions takes it this way (plants_change, plant-store import). A restored row is first moved past its mark.
CREATE FUNCTION plant_positions_take(at_ms BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  kept BIGINT;
  stamped xid8;
  written xid;
BEGIN
  SELECT c.last_pos, c.writer, c.xmin INTO kept, stamped, written FROM plant_event_counter c FOR UPDATE;
  IF stamped IS NOT NULL AND stamped::xid = written THEN
    RETURN kept;
  END IF;
  RETURN plant_positions_mark(at_ms);
END
$$;

-- plants_change of migrations/postgres/005, unchanged but for its first step: the counter comes from plant_positions_take.
CREATE OR REPLACE FUNCTION plants_change(kinds TEXT[], ids BIGINT[], names TEXT[], tags TEXT[], tag_set BOOLEAN[], if_match TEXT[], at_ms BIGINT)
RETURNS TABLE (idx INT, outcome TEXT, stored_name TEXT, stored_tag TEXT, stored_version BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
  next_pos BIGINT;
  first_pos BIGINT;
  wanted BIGINT[];
  old_tag TEXT;
  old_version BIGINT;
BEGIN
  IF coalesce(array_length(ids, 1), 0) = 0 THEN
    RETURN;
  END IF;
  next_pos := plant_positions_take(at_ms);
  first_pos := next_pos;
  FOR i IN 1 .. array_length(ids, 1) LOOP
    idx := i;
    outcome := NULL;
    stored_name := NULL;
    stored_tag := NULL;
    stored_version := NULL;
    IF kinds[i] = 'c' THEN
      LOOP
        INSERT INTO plants (id, name, tag, version) VALUES (ids[i], names[i], tags[i], next_pos + 1) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          next_pos := next_pos + 1;
          INSERT INTO plant_events (pos, kind, plant_id, name, tag, at) VALUES (next_pos, 'created', ids[i], names[i], tags[i], at_ms);
          outcome := 'created';
          stored_name := names[i];
          stored_tag := tags[i];
          stored_version := next_pos;
          EXIT;
        END IF;
        SELECT p.name, p.tag, p.version INTO stored_name, stored_tag, stored_version FROM plants p WHERE p.id = ids[i];
        IF FOUND THEN
          outcome := 'exists';
          EXIT;
        END IF;
      END LOOP;
    ELSE
      wanted := CASE WHEN if_match[i] IS NULL THEN NULL ELSE string_to_array(if_match[i], ',')::BIGINT[] END;
      SELECT p.tag, p.version INTO old_tag, old_version FROM plants p WHERE p.id = ids[i] FOR UPDATE;
      IF NOT FOUND THEN
        outcome := 'missing';
      ELSIF wanted IS NOT NULL AND NOT (old_version = ANY (wanted)) THEN
        outcome := 'stale';
        stored_version := old_version;
      ELSIF kinds[i] = 'd' THEN
        DELETE FROM plants p WHERE p.id = ids[i];
        next_pos := next_pos + 1;
        INSERT INTO plant_events (pos, kind, plant_id, tag, at) VALUES (next_pos, 'deleted', ids[i], old_tag, at_ms);
        outcome := 'deleted';
      ELSE
        next_pos := next_pos + 1;
        UPDATE plants p SET name = coalesce(names[i], p.name), tag = CASE WHEN tag_set[i] THEN tags[i] ELSE p.tag END, version = next_pos
        WHERE p.id = ids[i]
        RETURNING p.name, p.tag INTO stored_name, stored_tag;
        INSERT INTO plant_events (pos, kind, plant_id, name, tag, prev_tag, at)
        VALUES (next_pos, 'updated', ids[i], stored_name, stored_tag, old_tag, at_ms);
        outcome := 'updated';
        stored_version := next_pos;
      END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF next_pos <> first_pos THEN
    UPDATE plant_event_counter SET last_pos = next_pos;
    PERFORM pg_notify('plant_events', next_pos::TEXT);
  END IF;
END
$$;
