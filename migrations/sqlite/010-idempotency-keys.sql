-- Idempotency-Key: each caller's key with the request it was first sent with (SHA-256 of method, path and
-- body) and the answer it got (status, ETag, Location, body), kept until expires_at (Unix ms). A later request
-- with the key replays the answer; the prune deletes expired rows by expires_at.
CREATE TABLE idempotency_keys (
  caller TEXT NOT NULL,
  key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL,
  etag TEXT,
  location TEXT,
  body TEXT,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (caller, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
