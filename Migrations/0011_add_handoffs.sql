-- Hand-offs ("continue on my other device"): a short-lived, single-use code that another device
-- redeems for a token of its own onto a session (or for a fork of it). The code itself is never
-- stored: it carries this row's id and its expiry, signed by the server; the row records the
-- session, what redeeming makes, and whether it was used. Redeeming sets used_at in one
-- conditional update (WHERE used_at IS NULL), so only one redeemer wins.
--
-- session is not a foreign key: a code redeemed after its session was purged says so rather
-- than being unknown. Rows go when they expire (the retention pass's expired records).
CREATE TABLE handoffs (
    id         TEXT    PRIMARY KEY NOT NULL,  -- the code's random id, base64url; never the code
    session    TEXT    NOT NULL,
    fork       INTEGER NOT NULL CHECK (fork IN (0, 1)),  -- 1: redeeming makes a fork at version
    version    INTEGER NOT NULL CHECK (version >= 1),    -- the session's version when it was made
    created_at INTEGER NOT NULL,                         -- milliseconds since 1970
    expires_at INTEGER NOT NULL,                         -- milliseconds since 1970
    used_at    INTEGER                                   -- milliseconds since 1970; NULL: unused
) STRICT;

CREATE INDEX handoffs_by_session ON handoffs (session, expires_at);
CREATE INDEX handoffs_by_expiry ON handoffs (expires_at);

-- The tokens of devices that redeemed a hand-off onto a session: each may read and change that
-- session as its own token does. Only their SHA-256 is kept; they go with the session (ON DELETE
-- CASCADE, so a purge revokes them).
CREATE TABLE device_tokens (
    token_hash TEXT    PRIMARY KEY NOT NULL,  -- SHA-256 of the token, hex; never the token
    session    TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    handoff    TEXT    NOT NULL,              -- the hand-off it was redeemed with
    created_at INTEGER NOT NULL               -- milliseconds since 1970
) STRICT;

CREATE INDEX device_tokens_by_session ON device_tokens (session);
