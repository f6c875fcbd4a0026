-- Tenants (issue 35, docs/decisions/stores.md "Tenants on PostgreSQL"): every row a request reads or writes carries
-- its tenant's key; '' is the shared tenant (tenants off), and TENANT_DEFAULT's once they are on, so every row stored
-- before this file stays where it was without a rewrite. A constant default is a catalog change only (PostgreSQL 11
-- and later: no table rewrite), so this file holds each table's ACCESS EXCLUSIVE lock for milliseconds. The keys
-- compare COLLATE "C" (byte order), as every text key of plants does.
-- The indexes come in 016 and the primary key in 017: each file is one transaction, and a lock taken here would be
-- held until its end.
ALTER TABLE plants ADD COLUMN tenant TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE plant_events ADD COLUMN tenant TEXT COLLATE "C" NOT NULL DEFAULT '';
-- Carried to the delivery; the dispatcher claims by subscriber and seq, for every tenant alike.
ALTER TABLE webhook_outbox ADD COLUMN tenant TEXT COLLATE "C" NOT NULL DEFAULT '';
-- The primary key stays (caller, key): src/plants/plant.idempotency-keys.postgres.ts stores a caller of another
-- tenant than '' scoped to it, and every statement also names this column.
ALTER TABLE idempotency_keys ADD COLUMN tenant TEXT COLLATE "C" NOT NULL DEFAULT '';
