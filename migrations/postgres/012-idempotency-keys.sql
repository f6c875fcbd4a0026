-- Idempotency-Key: each caller's key with the request it was first sent with (SHA-256 of method, path and
-- body) and the answer it got (status, ETag, Location, body), kept until expires_at. A later request with the
-- key replays the answer; the prune deletes expired rows by expires_at.
CREATE TABLE idempotency_keys (
  caller text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  status integer NOT NULL,
  etag text,
  location text,
  body text,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (caller, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
