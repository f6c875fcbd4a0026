-- Tenants (issue 35): ids are unique per tenant. The primary key moves to (tenant, id) on the unique index 016 built,
-- a catalog change under a lock held for milliseconds; a plant of another tenant is then exactly a missing one.
-- Alone in its file: every plants_write any replica runs names (tenant, id) in its ON CONFLICT since 016 committed,
-- so a call in flight when this commits finds its arbiter index before and after (a body of the previous version
-- names (id), whose unique index goes here, and the body of a call cannot change while it runs).
ALTER TABLE plants DROP CONSTRAINT plants_pkey, ADD CONSTRAINT plants_pkey PRIMARY KEY USING INDEX plants_tenant_id;
