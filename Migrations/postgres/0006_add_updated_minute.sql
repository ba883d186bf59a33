-- Sessions' updates become HOT (issue 12): the PostgreSQL counterpart of Migrations/0008 (SQLite).
--
-- 0005 indexed sessions on (state, updated_at) for the retention sweep. Every mutation sets
-- updated_at, and PostgreSQL can update a row in place on its page, without new entries in any of
-- the table's indexes (a heap-only tuple, "HOT": https://www.postgresql.org/docs/current/storage-hot.html),
-- only when no indexed column changes value. So no update of a session was HOT: each one added an
-- entry to sessions_pkey and to the retention index, which vacuum later had to clean.
--
-- updated_minute is updated_at rounded down to its minute (in UTC), and retention's index is on
-- (state, updated_minute). Every mutation still assigns it; its value, and so the index, only
-- changes when a change crosses into another minute or changes the state, and PostgreSQL compares
-- values, not assignments, to decide. updated_at itself stays exact (it is the resources'
-- updatedAt). Retention finds `state = $1 AND updated_minute < $2 AND updated_at < $2 ORDER BY
-- updated_minute, updated_at`: the same rows in the same order as before, through the index.
--
-- An update is HOT only when the new row version fits on the old one's page: the table keeps a
-- tenth of each page free from now on (fillfactor applies to pages filled after this migration;
-- the pages already full make room as their old row versions are pruned).
--
-- The UPDATE below rewrites every session once, in this migration's transaction.
--
-- The column's default is for an instance of an older binary still running while others upgrade:
-- its INSERT names no updated_minute. '-infinity' sorts before every minute, so retention still
-- finds such a session when it is due (it checks updated_at exactly) and only meets it earlier in
-- its scan; the session's next change, through the function below, sets its minute.

ALTER TABLE sessions ADD COLUMN updated_minute timestamptz NOT NULL DEFAULT '-infinity';

UPDATE sessions SET updated_minute = date_trunc('minute', updated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';

DROP INDEX sessions_by_state_and_updated_at;
CREATE INDEX sessions_by_state_and_updated_minute ON sessions (state, updated_minute);

ALTER TABLE sessions SET (fillfactor = 90);

-- The function every mutation's session update goes through (0001) now keeps updated_minute.
CREATE OR REPLACE FUNCTION navigation_values_update_session(
    session_id text, new_version bigint, new_state text, new_updated_at timestamptz
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions
    SET version = new_version, state = new_state, updated_at = new_updated_at,
        updated_minute = date_trunc('minute', new_updated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
    WHERE id = session_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session % does not exist', session_id USING ERRCODE = 'NV422';
    END IF;
END
$$;
