-- Read-only tokens for observers (support tools that watch sessions but never change them).
-- Like session tokens, only their SHA-256 is kept. A token of one session goes with it (ON DELETE
-- CASCADE, so a purge revokes it); session NULL means every session (issued with the admin
-- token). Revoking one deletes its row.
CREATE TABLE observer_tokens (
    id         TEXT    PRIMARY KEY NOT NULL,
    session    TEXT    REFERENCES sessions (id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,  -- SHA-256 of the token, hex; never the token
    label      TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,         -- milliseconds since 1970
    expires_at INTEGER                   -- milliseconds since 1970; NULL: until revoked
) STRICT;

CREATE INDEX observer_tokens_by_session ON observer_tokens (session, id);
