-- id is the client's int64 key; BIGINT keeps all of it. Read back as a JavaScript bigint (see src/db/postgres.ts).
CREATE TABLE plants (
  id BIGINT PRIMARY KEY,
  name TEXT NOT NULL,
  tag TEXT
);

-- The group commit of src/plants/plant.repository.postgres.ts: one call applies a batch of creates ('c') and
-- deletes ('d') in the order given, inside the caller's one transaction, so a batch costs one round trip.
-- Each statement of a PL/pgSQL function takes a fresh snapshot under READ COMMITTED, so a create that lost a
-- race to another replica's commit reads the winner right after its INSERT did nothing; the loop covers a
-- winner deleted in between. Callers send ids in ascending order: two batches then lock rows in the same
-- order and cannot deadlock.
CREATE FUNCTION plants_apply(kinds TEXT[], ids BIGINT[], names TEXT[], tags TEXT[])
RETURNS TABLE (idx INT, created BOOLEAN, deleted BOOLEAN, stored_name TEXT, stored_tag TEXT)
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(ids, 1), 0) LOOP
    idx := i;
    created := false;
    deleted := false;
    stored_name := NULL;
    stored_tag := NULL;
    IF kinds[i] = 'd' THEN
      DELETE FROM plants WHERE plants.id = ids[i];
      deleted := FOUND;
    ELSE
      LOOP
        INSERT INTO plants (id, name, tag) VALUES (ids[i], names[i], tags[i]) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          created := true;
          stored_name := names[i];
          stored_tag := tags[i];
          EXIT;
        END IF;
        SELECT p.name, p.tag INTO stored_name, stored_tag FROM plants p WHERE p.id = ids[i];
        EXIT WHEN FOUND;
      END LOOP;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;
