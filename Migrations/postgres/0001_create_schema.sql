-- NavigationValues store schema for PostgreSQL, version 1: the tables of Migrations/0001 and
-- 0002 (SQLite), so that both stores keep the same rows.
--
-- Conventions:
-- * Times are timestamptz (whole milliseconds, as the server writes them).
-- * JSON is kept as json, which checks it and keeps the exact text, never interpreted by the store.
-- * Ids compare byte by byte (COLLATE "C"), so sessions list in the same order as on SQLite.
-- * Everything that belongs to a session goes with it: ON DELETE CASCADE.
-- * Every instance sharing the database runs these under one advisory lock; each file runs in
--   its own transaction with the schema_migrations row that records it.
-- A landed migration is history: change the schema with a new file, never by editing this one.

CREATE TABLE schema_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,  -- SHA-256 of the migration file, lowercase hex
    applied_at timestamptz NOT NULL
);

CREATE TABLE sessions (
    id         text COLLATE "C" PRIMARY KEY,
    version    bigint      NOT NULL CHECK (version >= 0),
    state      text        NOT NULL CHECK (state IN ('active', 'ended')),
    schema     json        NOT NULL,
    token_hash text        NOT NULL,  -- SHA-256 of the session token, hex; never the token
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- The screens of each session's stack; idx 0 is the root, previous links to the screen below.
CREATE TABLE screen_contexts (
    id       text COLLATE "C" PRIMARY KEY,
    session  text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    idx      integer NOT NULL CHECK (idx >= 0),
    name     text    NOT NULL,
    role     text    NOT NULL CHECK (role IN ('screen', 'navigationStack')),
    previous text COLLATE "C" REFERENCES screen_contexts (id),
    UNIQUE (session, idx)
);

CREATE INDEX screen_contexts_by_previous ON screen_contexts (previous);

-- A screen's own value overrides.
CREATE TABLE context_values (
    screen text COLLATE "C" NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key    text COLLATE "C" NOT NULL,
    json   json NOT NULL,
    PRIMARY KEY (screen, key)
);

-- A screen's preference handlers, with what each received last and what it passed on.
CREATE TABLE preference_handlers (
    screen      text COLLATE "C" NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key         text COLLATE "C" NOT NULL,
    pass_back   boolean NOT NULL,
    last_value  json,
    last_passed json,
    PRIMARY KEY (screen, key)
);

-- The last value a screen received per preference key; kept when its handler goes.
CREATE TABLE received_preferences (
    screen text COLLATE "C" NOT NULL REFERENCES screen_contexts (id) ON DELETE CASCADE,
    key    text COLLATE "C" NOT NULL,
    json   json NOT NULL,
    PRIMARY KEY (screen, key)
);

-- The append-only event log: seq is per session, from 1, and equals the version after it. The
-- primary key is what decides, across instances, which write got a seq.
CREATE TABLE events (
    session text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq     bigint      NOT NULL CHECK (seq >= 1),
    type    text        NOT NULL,
    json    json        NOT NULL,
    at      timestamptz NOT NULL,
    PRIMARY KEY (session, seq)
);

-- The whole session as JSON right after event seq, so replay starts near its target.
CREATE TABLE snapshots (
    session text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    seq     bigint NOT NULL CHECK (seq >= 1),
    json    json   NOT NULL,
    PRIMARY KEY (session, seq)
);

-- The first answer given under an Idempotency-Key, replayed for 24 h. Not tied to a session:
-- a retried purge must still find its answer.
CREATE TABLE idempotency_keys (
    scope      text COLLATE "C" NOT NULL,  -- e.g. 'POST /v1/sessions/s_1/push'
    key        text COLLATE "C" NOT NULL,
    status     integer     NOT NULL,
    headers    json        NOT NULL,  -- {"Location": "…", "ETag": "…"}
    body       bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);

CREATE INDEX idempotency_keys_by_created_at ON idempotency_keys (created_at);

-- A row per purged session: its history is gone, but readers asking for its events learn that
-- they were purged (410) rather than that the session never existed.
CREATE TABLE purged_sessions (
    id        text COLLATE "C" PRIMARY KEY,
    purged_at timestamptz NOT NULL
);

-- Every mutation's commit is conditional on the version its instance saw: this locks the
-- session's row (so concurrent writers of one session queue here) and raises NV409 when another
-- instance moved the session on, NV404 when it does not exist.
CREATE FUNCTION navigation_values_expect_version(session_id text, expected bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    current_version bigint;
BEGIN
    SELECT version INTO current_version FROM sessions WHERE id = session_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session % does not exist', session_id USING ERRCODE = 'NV404';
    END IF;
    IF current_version <> expected THEN
        RAISE EXCEPTION 'session % is at version %, not %', session_id, current_version, expected
            USING ERRCODE = 'NV409';
    END IF;
END
$$;

-- An UPDATE that must touch one row: NV422 when the row does not exist.
CREATE FUNCTION navigation_values_update_session(
    session_id text, new_version bigint, new_state text, new_updated_at timestamptz
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions SET version = new_version, state = new_state, updated_at = new_updated_at
    WHERE id = session_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session % does not exist', session_id USING ERRCODE = 'NV422';
    END IF;
END
$$;

CREATE FUNCTION navigation_values_remember_delivery(
    screen_id text, handler_key text, value_json json, passed_json json
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE preference_handlers SET last_value = value_json, last_passed = passed_json
    WHERE screen = screen_id AND key = handler_key;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'screen % has no handler for %', screen_id, handler_key USING ERRCODE = 'NV422';
    END IF;
END
$$;
