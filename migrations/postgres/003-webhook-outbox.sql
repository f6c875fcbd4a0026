-- The transactional outbox of the new-plant webhook (PostgreSQL): one row per (new plant, subscriber), written
-- in the same transaction as the plant. Times are Unix milliseconds. A pending row whose next_attempt_at lies
-- ahead is either waiting for its retry or leased by the replica attempting it (claim moves it past the lease).
CREATE TABLE webhook_outbox (
  seq BIGSERIAL PRIMARY KEY,
  event_id TEXT NOT NULL,
  subscriber TEXT NOT NULL,
  plant_id BIGINT NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  last_error TEXT
);

CREATE INDEX webhook_outbox_due ON webhook_outbox (subscriber, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_outbox_settled ON webhook_outbox (updated_at) WHERE status <> 'pending';
