-- A row per purged session: its history is gone, but readers asking for its events learn that
-- they were purged (410) rather than that the session never existed (API.md, Events).
CREATE TABLE purged_sessions (
    id        TEXT    PRIMARY KEY,
    purged_at INTEGER NOT NULL  -- milliseconds since 1970
) STRICT, WITHOUT ROWID;
