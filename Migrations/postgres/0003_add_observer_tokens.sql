-- Read-only tokens for observers (support tools that watch sessions but never change them), as
-- SQLite's 0004_add_observer_tokens. Only their SHA-256 is kept. A token of one session goes with
-- it (ON DELETE CASCADE, so a purge revokes it); session NULL means every session (issued with the
-- admin token). Revoking one deletes its row.
CREATE TABLE observer_tokens (
    id         text COLLATE "C" PRIMARY KEY,
    session    text COLLATE "C" REFERENCES sessions (id) ON DELETE CASCADE,
    token_hash text        NOT NULL UNIQUE,  -- SHA-256 of the token, hex; never the token
    label      text        NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz                   -- NULL: until revoked
);

CREATE INDEX observer_tokens_by_session ON observer_tokens (session, id);
