-- Log-first commits, as Migrations/0010 (SQLite): a mutation of an existing session commits its
-- event (and its idempotency record) and nothing else; the state rows it changes (screens, values,
-- handlers, received preferences, stacks, and the session's version, state and updated_at) are
-- written behind the log, a session's changes coalesced, by a later transaction of the instance
-- that committed it, conditional on the state's version. sessions.version is from here on the
-- version those rows reflect, which may be behind the session's log; the session's version is its
-- newest event when that is past it. An instance reading a session whose state lags its log (the
-- state waits in another instance, or that instance was killed first) replays the events after
-- sessions.version and writes what they change.
--
-- Nothing is rewritten: every row written before this migration has its state at its log's end.
-- The migration is recorded so that an older binary, which takes sessions.version for the
-- session's version and would lose the events after it, refuses the database. Instances of an
-- older binary still running when the first instance of this one starts must be stopped before
-- any instance writes behind (docs/Operations.md).
--
-- A log-first commit's check, as navigation_values_expect_version (0001) is an inline one's: it
-- locks the session's row (every writer of the session, on any instance, queues on it), then
-- compares the version the log reaches with the one the mutation was made from. The events are
-- read after the lock is taken, in a statement of their own, so they include the last holder's.

CREATE FUNCTION navigation_values_expect_log_version(session_id text, expected bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    state_version bigint;
    log_version bigint;
BEGIN
    SELECT version INTO state_version FROM sessions WHERE id = session_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session % does not exist', session_id USING ERRCODE = 'NV404';
    END IF;
    SELECT coalesce(max(seq), state_version) INTO log_version
    FROM events WHERE session = session_id AND seq > state_version;
    IF log_version <> expected THEN
        RAISE EXCEPTION 'session % is at version %, not %', session_id, log_version, expected
            USING ERRCODE = 'NV409';
    END IF;
END
$$;

-- Each session's version as its log says, and the version its state rows reflect, for an
-- operator with psql.
CREATE VIEW session_versions (id, version, state_version) AS
SELECT id,
       coalesce((SELECT max(seq) FROM events
                 WHERE events.session = sessions.id AND events.seq > sessions.version), sessions.version),
       version
FROM sessions;
