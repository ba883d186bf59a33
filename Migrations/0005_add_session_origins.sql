-- Where a forked session came from: the session it was forked from and the version it started
-- as (its history up to that version is a copy of the origin's). NULL for every other session.
-- Not a foreign key: a fork outlives the purge of its origin.
ALTER TABLE sessions ADD COLUMN origin_session TEXT;
ALTER TABLE sessions ADD COLUMN origin_version INTEGER
    CHECK ((origin_session IS NULL) = (origin_version IS NULL) AND (origin_version IS NULL OR origin_version >= 1));
