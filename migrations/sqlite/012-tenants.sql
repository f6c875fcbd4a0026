-- Tenants (issue 35, docs/decisions/stores.md "Tenants on SQLite"): every plant, event, webhook row and kept
-- Idempotency-Key answer belongs to one tenant, by its key: '' is the shared tenant (tenants off, and
-- TENANT_DEFAULT's tenant when they are on), so every row stored before stays where it was without a rewrite of
-- its meaning. Ids are unique per tenant: plants' primary key becomes (tenant, id).
--
-- SQLite has no ALTER for a primary key and id was the rowid, so plants is rebuilt: WITHOUT ROWID, clustered on
-- (tenant, id), so a read by id is one descent of the table's own b-tree, as before. Every secondary index leads
-- with the tenant, so every list, count and search is a range inside one tenant; SQLite appends the primary key's
-- columns an index lacks (here id), so each index is in its order's full key as before (migrations 009 and 011):
-- (tenant, tag, id), (tenant, created_at, id), (tenant, updated_at, id); plants_by_name spells id out third as
-- 011 did, and plants_by_id_key is (tenant, id, name_key).
CREATE TABLE plants_new (
  tenant TEXT NOT NULL DEFAULT '',
  id INTEGER NOT NULL,
  name TEXT NOT NULL,
  tag TEXT,
  version INTEGER NOT NULL DEFAULT 0,
  created_at TEXT,
  updated_at TEXT,
  name_key TEXT,
  PRIMARY KEY (tenant, id)
) STRICT, WITHOUT ROWID;
INSERT INTO plants_new (tenant, id, name, tag, version, created_at, updated_at, name_key)
SELECT '', id, name, tag, version, created_at, updated_at, name_key FROM plants ORDER BY id;
DROP TABLE plants;
ALTER TABLE plants_new RENAME TO plants;
CREATE INDEX plants_by_tag ON plants (tenant, tag);
CREATE INDEX plants_by_name ON plants (tenant, name_key, name, id, tag, created_at, updated_at);
CREATE INDEX plants_by_created ON plants (tenant, created_at);
CREATE INDEX plants_by_updated ON plants (tenant, updated_at);
CREATE INDEX plants_by_id_key ON plants (tenant, id, name_key);
CREATE INDEX plants_unkeyed ON plants (tenant, id) WHERE name_key IS NULL;

-- The change feed: positions stay store-wide (one order for the one reader per process; ETags unique across
-- tenants). A stream's catch-up reads its tenant's events after a position: (tenant) with the rowid pos appended.
-- A constant default: the column is added without rewriting a row.
ALTER TABLE plant_events ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
CREATE INDEX plant_events_by_tenant ON plant_events (tenant);

-- Webhook rows carry their change's tenant to the delivery; the dispatcher claims by subscriber and seq as before.
ALTER TABLE webhook_outbox ADD COLUMN tenant TEXT NOT NULL DEFAULT '';

-- A key is one caller's in one tenant: the same caller (an admin acting in two tenants) holds two keys. The table
-- is small (keys live a day) and WITHOUT ROWID on its key, so it is rebuilt with the tenant in the primary key.
CREATE TABLE idempotency_keys_new (
  tenant TEXT NOT NULL DEFAULT '',
  caller TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  etag TEXT,
  location TEXT,
  body TEXT,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, caller, key)
) WITHOUT ROWID;
INSERT INTO idempotency_keys_new (tenant, caller, key, fingerprint, status, etag, location, body, expires_at)
SELECT '', caller, key, fingerprint, status, etag, location, body, expires_at FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_new RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
