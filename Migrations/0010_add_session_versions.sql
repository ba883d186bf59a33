-- Log-first commits: a mutation of an existing session commits its event (and its idempotency
-- record) and nothing else; the state rows it changes (screens, values, handlers, received
-- preferences, stacks, and the session's version, state and updated_at) are written behind the
-- log, a session's changes coalesced, by a later transaction of the writer. sessions.version is
-- from here on the version those rows reflect, which may be behind the session's log; the
-- session's version is its newest event when that is past it. A server reading a session writes
-- what its state lacks first, replaying the events after sessions.version.
--
-- Nothing is rewritten: every row written before this migration has its state at its log's end.
-- The migration is recorded so that an older binary, which takes sessions.version for the
-- session's version and would lose the events after it, refuses the file.
--
-- session_versions answers, for an operator with the sqlite3 shell, each session's version as
-- its log says and the version its state rows reflect.

CREATE VIEW session_versions (id, version, state_version) AS
SELECT id,
       coalesce((SELECT max(seq) FROM events
                 WHERE events.session = sessions.id AND events.seq > sessions.version), sessions.version),
       version
FROM sessions;
