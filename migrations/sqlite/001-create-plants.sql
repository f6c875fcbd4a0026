-- id is the client's int64 key; INTEGER PRIMARY KEY makes it the rowid, so lookups by id need no second index.
CREATE TABLE plants (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  tag TEXT
) STRICT;
