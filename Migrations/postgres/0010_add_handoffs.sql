-- Hand-offs ("continue on my other device"), as SQLite's 0011_add_handoffs: a short-lived,
-- single-use code that another device redeems for a token of its own onto a session (or for a
-- fork of it). The code is never stored: it carries this row's id and its expiry, signed by the
-- server. Redeeming sets used_at in one conditional update (WHERE used_at IS NULL ... RETURNING),
-- so of several instances redeeming one code at once exactly one wins.
--
-- session is not a foreign key: a code redeemed after its session was purged says so rather
-- than being unknown. Rows go when they expire (the retention pass's expired records).
CREATE TABLE handoffs (
    id         text COLLATE "C" PRIMARY KEY,  -- the code's random id, base64url; never the code
    session    text COLLATE "C" NOT NULL,
    fork       smallint    NOT NULL CHECK (fork IN (0, 1)),  -- 1: redeeming makes a fork at version
    version    bigint      NOT NULL CHECK (version >= 1),    -- the session's version when it was made
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz                                   -- NULL: unused
);

CREATE INDEX handoffs_by_session ON handoffs (session, expires_at);
CREATE INDEX handoffs_by_expiry ON handoffs (expires_at);

-- The tokens of devices that redeemed a hand-off onto a session: each may read and change that
-- session as its own token does. Only their SHA-256 is kept; they go with the session (ON DELETE
-- CASCADE, so a purge revokes them).
CREATE TABLE device_tokens (
    token_hash text        PRIMARY KEY,  -- SHA-256 of the token, hex; never the token
    session    text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    handoff    text        NOT NULL,     -- the hand-off it was redeemed with
    created_at timestamptz NOT NULL
);

CREATE INDEX device_tokens_by_session ON device_tokens (session);
