-- Log-first commits append to a table keyed by its rowid alone: the events of every session share
-- its last page, so a group commit of N mutations of N sessions writes a page or two of events
-- where an insert into `events` writes its entry into the leaf of `events`' index where its
-- session's entries are (UNIQUE (session, seq), Migrations/0001): about one page per mutation in
-- the commit's synced log.
--
-- The writer moves the rows into `events` between two batches, every row at once in one
-- transaction, once the table holds a few thousand (then many events of a session share a page of
-- the index), before reads of many sessions, at a clean stop and when the file opens (a killed
-- process leaves rows here: nothing is lost). A session's events are therefore its rows of `events`
-- followed by its rows here (never both tables for one event); every read of events reads both.
--
-- No index by session: the table stays small, and the writer knows each of its sessions' newest
-- seq in memory. Nothing is rewritten: the table starts empty.

CREATE TABLE event_log (
    session TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    type    TEXT    NOT NULL,
    json    TEXT    NOT NULL CHECK (json_valid(json)),
    at      INTEGER NOT NULL,
    bytes   INTEGER CHECK (bytes >= 0)
) STRICT;

-- Each session's version as its log says (the view of Migrations/0010, with event_log's rows).
DROP VIEW session_versions;

CREATE VIEW session_versions (id, version, state_version) AS
SELECT id,
       coalesce((SELECT max(seq) FROM event_log WHERE event_log.session = sessions.id),
                (SELECT max(seq) FROM events
                 WHERE events.session = sessions.id AND events.seq > sessions.version), sessions.version),
       version
FROM sessions;
