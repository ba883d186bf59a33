-- NavigationValues store schema, version 1.
--
-- Conventions:
-- * Times are INTEGER milliseconds since 1970-01-01 UTC. Read them in the sqlite3 shell with
--   strftime('%Y-%m-%dT%H:%M:%fZ', at / 1000.0, 'unixepoch').
-- * JSON is kept as TEXT, checked with json_valid(), and never interpreted by the store.
-- * Tables are STRICT (SQLite 3.37+), so a value of the wrong type is refused.
-- * Everything that belongs to a session goes with it: ON DELETE CASCADE.
-- A landed migration is history: change the schema with a new file, never by editing this one.

CREATE TABLE schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    checksum   TEXT    NOT NULL,  -- SHA-256 of the migration file, lowercase hex
    applied_at INTEGER NOT NULL
) STRICT;

CREATE TABLE sessions (
    id         TEXT    PRIMARY KEY NOT NULL,
    version    INTEGER NOT NULL CHECK (version >= 0),
    state      TEXT    NOT NULL CHECK (state IN ('active', 'ended')),
    schema     TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(schema)),
    token_hash TEXT    NOT NULL,  -- SHA-256 of the session token, hex; never the token
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- The screens of each session's stack; idx 0 is the root, previous links to the screen below.
CREATE TABLE screen_contexts (
    id       TEXT    PRIMARY KEY NOT NULL,
    session  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx      INTEGER NOT NULL CHECK (idx >= 0),
    name     TEXT    NOT NULL,
    role     TEXT    NOT NULL CHECK (role IN ('screen', 'navigationStack')),
    previous TEXT    REFERENCES screen_contexts (id),
    UNIQUE (session, idx)
) STRICT;

CREATE INDEX screen_contexts_by_previous ON screen_contexts (previous);

-- A screen's own value overrides.
CREATE TABLE context_values (
    screen TEXT NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    json   TEXT NOT NULL CHECK (json_valid(json)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

-- A screen's preference handlers, with what each received last and what it passed on
-- (SEMANTICS.md §3). last_passed is NULL when the handler stopped the walk or saw nothing.
CREATE TABLE preference_handlers (
    screen      TEXT    NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key         TEXT    NOT NULL,
    pass_back   INTEGER NOT NULL CHECK (pass_back IN (0, 1)),
    last_value  TEXT    CHECK (last_value IS NULL OR json_valid(last_value)),
    last_passed TEXT    CHECK (last_passed IS NULL OR json_valid(last_passed)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

-- The last value a screen received per preference key; kept when its handler goes.
CREATE TABLE received_preferences (
    screen TEXT NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    json   TEXT NOT NULL CHECK (json_valid(json)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

-- The append-only event log: seq is per session, from 1, and equals the version after it.
CREATE TABLE events (
    session TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    type    TEXT    NOT NULL,
    json    TEXT    NOT NULL CHECK (json_valid(json)),
    at      INTEGER NOT NULL,
    UNIQUE (session, seq)
) STRICT;

-- The whole session as JSON right after event seq, so replay starts near its target.
CREATE TABLE snapshots (
    session TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL CHECK (seq >= 1),
    json    TEXT    NOT NULL CHECK (json_valid(json)),
    PRIMARY KEY (session, seq)
) STRICT, WITHOUT ROWID;

-- The first answer given under an Idempotency-Key, replayed for 24 h. Not tied to a session:
-- a retried purge must still find its answer.
CREATE TABLE idempotency_keys (
    scope      TEXT    NOT NULL,  -- e.g. 'POST /v1/sessions/s_1/push'
    key        TEXT    NOT NULL,
    status     INTEGER NOT NULL,
    headers    TEXT    NOT NULL CHECK (json_valid(headers)),  -- {"Location": "…", "ETag": "…"}
    body       BLOB    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);
