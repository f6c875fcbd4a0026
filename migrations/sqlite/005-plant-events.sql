-- The change feed (GET /plants/events): one row per create, edit and delete, written in the same transaction as
-- the change. pos is the event's position: AUTOINCREMENT, so a position is never reused even after pruning has
-- removed the newest rows. tag is the plant's tag after the change (before it, for a delete), prev_tag the tag
-- an edit replaced: a stream filtered by tag sees a plant leave its tag as well as enter it. at is Unix ms.
CREATE TABLE plant_events (
  pos INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL CHECK (kind IN ('created', 'updated', 'deleted')),
  plant_id INTEGER NOT NULL,
  name TEXT,
  tag TEXT,
  prev_tag TEXT,
  at INTEGER NOT NULL
) STRICT;

-- The position of the plant's last change: its ETag. 0 for plants stored before the feed existed.
ALTER TABLE plants ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
