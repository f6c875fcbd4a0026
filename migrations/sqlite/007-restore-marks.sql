-- Restores (plant-store restore, src/backup/restore.ts): each row says that the store, restored from a backup
-- whose last position was restored_last, continued after mark (AUTOINCREMENT's record set to it), the greatest of
-- that position, the replaced store's last one and the restore's time in microseconds. A position strictly
-- between the two may have been handed out by the store the restore replaced, after the backup: no event or
-- version here ever takes one, and a reader resuming from one gets a reset. restored_at is Unix ms.
CREATE TABLE plant_event_restores (
  mark INTEGER PRIMARY KEY,
  restored_last INTEGER NOT NULL,
  restored_at INTEGER NOT NULL
) STRICT;
