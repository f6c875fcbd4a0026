-- The change feed (GET /plants/events): one row per create, edit and delete, written by plants_change in the
-- same transaction as the change. tag is the plant's tag after the change (before it, for a delete), prev_tag
-- the tag an edit replaced. at is Unix ms.
CREATE TABLE plant_events (
  pos BIGINT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('created', 'updated', 'deleted')),
  plant_id BIGINT NOT NULL,
  name TEXT,
  tag TEXT,
  prev_tag TEXT,
  at BIGINT NOT NULL
);

-- Positions come from this one row, read FOR UPDATE at the start of each batch and written at its end: its row
-- lock makes the batches of every replica take their positions one after the other, and a batch takes its
-- positions only after the previous holder has committed, so positions become visible in the order they are
-- numbered and a reader that has seen position n has seen every position below it (docs/decisions.md). A rolled
-- back batch rolls its positions back with it: positions have no gaps.
CREATE TABLE plant_event_counter (
  only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
  last_pos BIGINT NOT NULL
);
INSERT INTO plant_event_counter (last_pos) VALUES (0);

-- The position of the plant's last change: its ETag. 0 for plants stored before the feed existed. A constant
-- default rewrites no rows.
ALTER TABLE plants ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- The group commit of src/plants/plant.repository.postgres.ts with the feed: creates ('c'), edits ('u') and
-- deletes ('d') in the order given, each change with its event. For an edit, a NULL name keeps the name and
-- tag_set says whether tags[i] replaces the tag (NULL removes it). if_match[i], when not NULL, lists the versions
-- (comma-separated, maybe none) an edit or delete requires; another version answers 'stale' and changes nothing.
-- outcome: created, exists (a create whose id is taken: the stored plant), updated, deleted, missing or stale.
-- Wakes the feed of every replica with NOTIFY plant_events, delivered when the transaction commits.
CREATE FUNCTION plants_change(kinds TEXT[], ids BIGINT[], names TEXT[], tags TEXT[], tag_set BOOLEAN[], if_match TEXT[], at_ms BIGINT)
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
  SELECT c.last_pos INTO next_pos FROM plant_event_counter c FOR UPDATE;
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
