-- The transactional outbox of the new-plant webhook: one row per (new plant, subscriber), written in the
-- same transaction as the plant. Created whether or not webhooks are configured; with none, nothing is written.
-- Times are Unix milliseconds. status: pending (to attempt at next_attempt_at), delivered, failed (attempts spent).
CREATE TABLE webhook_outbox (
  seq INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  subscriber TEXT NOT NULL,
  plant_id INTEGER NOT NULL,
  payload TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_error TEXT
) STRICT;

-- What is due, per subscriber; only pending rows, so a create's insert is the only write that touches it.
CREATE INDEX webhook_outbox_due ON webhook_outbox (subscriber, next_attempt_at) WHERE status = 'pending';
-- What may be pruned.
CREATE INDEX webhook_outbox_settled ON webhook_outbox (updated_at) WHERE status <> 'pending';
