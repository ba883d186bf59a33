-- Fewer pages written per mutation (issue 12): retention's index no longer moves on every mutation.
--
-- 0006 indexed sessions on (state, updated_at) for the retention sweep. Every mutation sets
-- updated_at (and assigns state, even unchanged), so its entry in that index was deleted from a
-- leaf at a random place and inserted at the right edge: about two pages of a mutation committed
-- alone, one under load (where the right edge is shared by the commit group). SQLite rewrites an
-- index entry whenever its UPDATE assigns a column of the index, even to the value it had, so the
-- index must be on a column that an ordinary mutation does not assign.
--
-- updated_minute is updated_at rounded down to its minute (milliseconds since 1970, truncated as
-- SQLite's % truncates), and the index is on (state, updated_minute). The store assigns
-- version and updated_at on every mutation, and state and updated_minute only when one of them
-- changes: a session's entry moves at most once a minute, however often it changes. updated_at
-- itself stays exact (it is the resources' updatedAt). Retention finds
-- `state = ? AND updated_minute < ?before AND updated_at < ?before ORDER BY updated_minute,
-- updated_at`: the same rows in the same order as before, through the index, checking updated_at
-- only on the rows of the last minute. A hand edit of updated_at (the sqlite3 shell) that leaves
-- updated_minute behind only moves when retention finds that session, by up to the difference; set
-- both (updated_minute = updated_at - updated_at % 60000).
--
-- Measured with the store's push/pop statements on 1,000 sessions of 6 screens (WAL frames counted
-- with autocheckpoint off, as for 0007): 10.0 pages per mutation committed alone before, 8.0 after;
-- 8.0 and 7.0 in commits of 4; 6.4 and 6.0 in commits of 16. The index cost about 0.9 of a page by
-- dbstat, and about one more that dbstat had put on events' leaves: the index's pages emptied at
-- random places and freed were reused by events as it grew (events' leaves: 2.07 pages per
-- mutation before, 1.00 after). Through the server (--sync normal, one request at a time, one
-- mutation per commit): 8.8 pages per mutation before, 7.4 after.
--
-- screen_contexts_by_previous stays as it is. A partial index (WHERE previous IS NOT NULL) would
-- not save a page: previous is set on every screen above a stack's root (the screen below it), not
-- only on a presentation's root, so a push or pop still writes it (7.96 pages against 8.0).

ALTER TABLE sessions ADD COLUMN updated_minute INTEGER NOT NULL DEFAULT 0;

UPDATE sessions SET updated_minute = updated_at - updated_at % 60000;

DROP INDEX sessions_by_state_and_updated_at;
CREATE INDEX sessions_by_state_and_updated_minute ON sessions (state, updated_minute);
