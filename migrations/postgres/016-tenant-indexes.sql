-- Tenants (issue 35): an index for every read of one tenant, each led by the tenant so a read is a range inside it
-- (the list orders of 010 and 013, the tag of 002, the unkeyed plants of 009, the feed's catch-up), and the
-- plants_write overloads that name the tenant. Built without CONCURRENTLY (the runner applies a file in one
-- transaction): each build holds a SHARE lock, so reads go on and writes wait until the file commits
-- (docs/operations.md "Upgrading to tenants", figures in docs/performance/tenants.md). plants_tenant_id becomes the
-- primary key in 017.
--
-- The indexes of 002, 009, 010 and 013 stay for this release, and a plain index on id joins them, for the replicas
-- of the previous version during a rolling upgrade: their statements name no tenant, and once 017 moves the
-- primary key to (tenant, id) they would read by id without an index. TODO(#35): a migration of the next release
-- drops plants_by_tag, plants_by_name, plants_by_created, plants_by_updated, plants_unkeyed and plants_by_id.
CREATE UNIQUE INDEX plants_tenant_id ON plants (tenant, id);
CREATE INDEX plants_by_id ON plants (id);
CREATE INDEX plants_tenant_by_tag ON plants (tenant, tag, id);
-- Covering, as 013's: a name page is an index-only scan.
CREATE INDEX plants_tenant_by_name ON plants (tenant, name_key, name COLLATE "C", id) INCLUDE (tag, created_at, updated_at);
CREATE INDEX plants_tenant_by_created ON plants (tenant, created_at, id);
CREATE INDEX plants_tenant_by_updated ON plants (tenant, updated_at, id);
CREATE INDEX plants_tenant_unkeyed ON plants (tenant, id) WHERE name_key IS NULL;
-- A stream's catch-up reads its tenant's events after a position; the live reader reads every tenant's by pos.
CREATE INDEX plant_events_by_tenant ON plant_events (tenant, pos);

-- The write of one group commit, as 009's plants_write, with each row's tenant beside its id: the rows read
-- (checked under the feed's counter), the puts, the removals and the events. Positions stay store-wide
-- (docs/decisions/stores.md). An overload: 008's and 009's stay for the previous version's replicas during a
-- rolling upgrade, redefined below to write the shared tenant. Here rather than in 017, beside the unique index
-- their ON CONFLICT (tenant, id) needs: a call of the previous body (ON CONFLICT (id)) in flight when this file
-- commits still finds the primary key on id, and 017 then swaps the primary key under bodies that name (tenant, id).
CREATE FUNCTION plants_write(
  at_ms BIGINT,
  read_tenants TEXT[], read_ids BIGINT[], read_versions BIGINT[],
  put_tenants TEXT[], put_ids BIGINT[], put_names TEXT[], put_tags TEXT[], put_created_ats TEXT[], put_updated_ats TEXT[], put_name_keys TEXT[],
  put_offsets BIGINT[],
  removed_tenants TEXT[], removed_ids BIGINT[],
  event_tenants TEXT[], event_kinds TEXT[], event_ids BIGINT[], event_names TEXT[], event_tags TEXT[], event_created_ats TEXT[], event_updated_ats TEXT[],
  event_prev_names TEXT[], event_prev_tags TEXT[]
) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
  base BIGINT;
  n INT := coalesce(array_length(event_ids, 1), 0);
BEGIN
  base := plant_positions_take(at_ms);
  -- Each row by its key (a subquery per row), as in 008: a join's plan, cached while the table was small, could
  -- scan the whole table on every batch.
  IF EXISTS (
    SELECT 1 FROM unnest(read_tenants, read_ids, read_versions) AS r(tenant, id, version)
    WHERE r.version IS DISTINCT FROM (SELECT p.version FROM plants p WHERE p.tenant = r.tenant AND p.id = r.id)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO plants (tenant, id, name, tag, created_at, updated_at, name_key, version)
  SELECT u.tenant, u.id, u.name, u.tag, u.created_at, u.updated_at, u.name_key, base + u.offs
  FROM unnest(put_tenants, put_ids, put_names, put_tags, put_created_ats, put_updated_ats, put_name_keys, put_offsets)
    AS u(tenant, id, name, tag, created_at, updated_at, name_key, offs)
  ON CONFLICT (tenant, id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, created_at = EXCLUDED.created_at,
    updated_at = EXCLUDED.updated_at, name_key = EXCLUDED.name_key, version = EXCLUDED.version;
  -- One statement per removal, each a primary key probe.
  FOR i IN 1 .. coalesce(cardinality(removed_ids), 0) LOOP
    DELETE FROM plants WHERE tenant = removed_tenants[i] AND id = removed_ids[i];
  END LOOP;
  INSERT INTO plant_events (pos, tenant, kind, plant_id, name, tag, created_at, updated_at, prev_name, prev_tag, at)
  SELECT base + e.i, e.tenant, e.kind, e.id, e.name, e.tag, e.created_at, e.updated_at, e.prev_name, e.prev_tag, at_ms
  FROM unnest(event_tenants, event_kinds, event_ids, event_names, event_tags, event_created_ats, event_updated_ats, event_prev_names, event_prev_tags)
    WITH ORDINALITY AS e(tenant, kind, id, name, tag, created_at, updated_at, prev_name, prev_tag, i);
  IF n > 0 THEN
    UPDATE plant_event_counter SET last_pos = base + n;
    PERFORM pg_notify('plant_events', (base + n)::TEXT);
  END IF;
  RETURN base;
END
$$;

-- The shared tenant's key for each of `n` rows: what the previous version's calls mean.
CREATE FUNCTION plants_shared_tenant(n INT) RETURNS TEXT[]
LANGUAGE sql IMMUTABLE AS $$ SELECT array_fill(''::TEXT, ARRAY[coalesce(n, 0)]) $$;

-- 009's plants_write, called by replicas of the previous version during the roll (docs/operations.md: tenants stay
-- off until the roll is done): every row it reads, writes and removes is in the shared tenant.
CREATE OR REPLACE FUNCTION plants_write(
  at_ms BIGINT,
  read_ids BIGINT[], read_versions BIGINT[],
  put_ids BIGINT[], put_names TEXT[], put_tags TEXT[], put_created_ats TEXT[], put_updated_ats TEXT[], put_name_keys TEXT[],
  put_offsets BIGINT[],
  removed_ids BIGINT[],
  event_kinds TEXT[], event_ids BIGINT[], event_names TEXT[], event_tags TEXT[], event_created_ats TEXT[], event_updated_ats TEXT[],
  event_prev_names TEXT[], event_prev_tags TEXT[]
) RETURNS BIGINT
LANGUAGE plpgsql AS $$
BEGIN
  RETURN plants_write(at_ms,
    plants_shared_tenant(cardinality(read_ids)), read_ids, read_versions,
    plants_shared_tenant(cardinality(put_ids)), put_ids, put_names, put_tags, put_created_ats, put_updated_ats, put_name_keys, put_offsets,
    plants_shared_tenant(cardinality(removed_ids)), removed_ids,
    plants_shared_tenant(cardinality(event_ids)), event_kinds, event_ids, event_names, event_tags, event_created_ats, event_updated_ats,
    event_prev_names, event_prev_tags);
END
$$;

-- 008's plants_write as 009 redefined it, in the shared tenant: its plants get the batch's time as updatedAt (and
-- createdAt when new) and a NULL search key, which a replica of this version fills when it next opens the store.
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
    WHERE r.version IS DISTINCT FROM (SELECT p.version FROM plants p WHERE p.tenant = '' AND p.id = r.id)
  ) THEN
    RETURN NULL;
  END IF;
  INSERT INTO plants (tenant, id, name, tag, created_at, updated_at, name_key, version)
  SELECT '', u.id, u.name, u.tag, stamp, stamp, NULL, base + u.offs FROM unnest(put_ids, put_names, put_tags, put_offsets) AS u(id, name, tag, offs)
  ON CONFLICT (tenant, id) DO UPDATE SET name = EXCLUDED.name, tag = EXCLUDED.tag, updated_at = stamp, name_key = NULL, version = EXCLUDED.version;
  IF cardinality(removed_ids) > 0 THEN
    DELETE FROM plants WHERE tenant = '' AND id = ANY (removed_ids);
  END IF;
  INSERT INTO plant_events (pos, tenant, kind, plant_id, name, tag, created_at, updated_at, prev_tag, at)
  SELECT base + e.i, '', e.kind, e.id, e.name, e.tag,
    CASE WHEN e.kind <> 'deleted' THEN (SELECT p.created_at FROM plants p WHERE p.tenant = '' AND p.id = e.id) END,
    CASE WHEN e.kind <> 'deleted' THEN stamp END, e.prev_tag, at_ms
  FROM unnest(event_kinds, event_ids, event_names, event_tags, event_prev_tags) WITH ORDINALITY AS e(kind, id, name, tag, prev_tag, i);
  IF n > 0 THEN
    UPDATE plant_event_counter SET last_pos = base + n;
    PERFORM pg_notify('plant_events', (base + n)::TEXT);
  END IF;
  RETURN base;
END
$$;
