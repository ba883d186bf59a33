-- Retention, compaction, readiness and idempotency records that hold no usable token (issue 13):
-- the PostgreSQL counterpart of Migrations/0003_add_retention.sql (SQLite), so that both stores
-- keep the same rows.

-- Events up to and including compacted_seq were deleted by history compaction (0: none). A
-- snapshot at exactly that seq is kept, so the session still replays at it and at every later
-- seq, and readers may resume after it; asking for anything before it is 410.
ALTER TABLE sessions ADD COLUMN compacted_seq bigint NOT NULL DEFAULT 0 CHECK (compacted_seq >= 0);

-- Retention looks sessions up by state and last change: idle active ones to end, old ended
-- ones to purge.
CREATE INDEX sessions_by_state_and_updated_at ON sessions (state, updated_at);

-- Idempotency records belong to their session and are deleted with it (NULL: a record kept
-- before this migration, which expires on its own within 24 h, or a purge's own record).
ALTER TABLE idempotency_keys ADD COLUMN session text COLLATE "C" REFERENCES sessions (id) ON DELETE CASCADE;
CREATE INDEX idempotency_keys_by_session ON idempotency_keys (session);

-- From now on a record's key column holds a hash of the client's key and its body is sealed
-- under a key derived from the client's key. Records kept before this migration can no longer be
-- found (their key column holds the client's key itself), and a create's answer among them holds
-- the new session's token in clear: they are all deleted (a request retried across the upgrade
-- is applied again, as one retried after 24 h would be).
DELETE FROM idempotency_keys;

-- Tombstones of purged sessions expire with the retention of ended sessions.
CREATE INDEX purged_sessions_by_purged_at ON purged_sessions (purged_at);

-- /readyz proves the database takes a write by writing this one row.
CREATE TABLE readiness_probe (
    id        integer     PRIMARY KEY CHECK (id = 1),
    probed_at timestamptz NOT NULL
);
