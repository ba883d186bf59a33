-- Several stacks per session (issue 16, docs/Stacks.md): a screen belongs to the session's main
-- stack, to a tab or to a presentation, and its position is unique within its stack rather than
-- within the session. SQLite cannot change a table's UNIQUE constraint in place, so screen_contexts
-- and the three tables that reference it are rebuilt with foreign keys on (a migration runs inside
-- a transaction, where PRAGMA foreign_keys cannot change; https://sqlite.org/lang_altertable.html):
-- the new tables are created referencing the new screen_contexts and filled; the old ones are
-- dropped, children first, so the implicit DELETE of dropping screen_contexts cascades into
-- nothing; renaming the new ones then rewrites every reference to the final names.

CREATE TABLE screen_contexts_new (
    id       TEXT    PRIMARY KEY NOT NULL,
    session  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    stack    TEXT    NOT NULL DEFAULT 'main',  -- 'main', or the id of a row of screen_stacks
    idx      INTEGER NOT NULL CHECK (idx >= 0),  -- position in its stack, 0 for the stack's root
    name     TEXT    NOT NULL,
    role     TEXT    NOT NULL CHECK (role IN ('screen', 'navigationStack')),
    previous TEXT    REFERENCES screen_contexts_new (id),  -- a presentation's root: its presenter
    UNIQUE (session, stack, idx)
) STRICT;

INSERT INTO screen_contexts_new (id, session, stack, idx, name, role, previous)
SELECT id, session, 'main', idx, name, role, previous FROM screen_contexts ORDER BY session, idx;

CREATE TABLE context_values_new (
    screen TEXT NOT NULL REFERENCES screen_contexts_new (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    json   TEXT NOT NULL CHECK (json_valid(json)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

INSERT INTO context_values_new (screen, key, json) SELECT screen, key, json FROM context_values;

CREATE TABLE preference_handlers_new (
    screen      TEXT    NOT NULL REFERENCES screen_contexts_new (id) ON DELETE CASCADE,
    key         TEXT    NOT NULL,
    pass_back   INTEGER NOT NULL CHECK (pass_back IN (0, 1)),
    last_value  TEXT    CHECK (last_value IS NULL OR json_valid(last_value)),
    last_passed TEXT    CHECK (last_passed IS NULL OR json_valid(last_passed)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

INSERT INTO preference_handlers_new (screen, key, pass_back, last_value, last_passed)
SELECT screen, key, pass_back, last_value, last_passed FROM preference_handlers;

CREATE TABLE received_preferences_new (
    screen TEXT NOT NULL REFERENCES screen_contexts_new (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    json   TEXT NOT NULL CHECK (json_valid(json)),
    PRIMARY KEY (screen, key)
) STRICT, WITHOUT ROWID;

INSERT INTO received_preferences_new (screen, key, json) SELECT screen, key, json FROM received_preferences;

DROP TABLE context_values;
DROP TABLE preference_handlers;
DROP TABLE received_preferences;
DROP TABLE screen_contexts;

ALTER TABLE screen_contexts_new RENAME TO screen_contexts;
ALTER TABLE context_values_new RENAME TO context_values;
ALTER TABLE preference_handlers_new RENAME TO preference_handlers;
ALTER TABLE received_preferences_new RENAME TO received_preferences;

CREATE INDEX screen_contexts_by_previous ON screen_contexts (previous);

-- The stacks of a session besides its main stack: tabs and presentations.
CREATE TABLE screen_stacks (
    session   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id        TEXT    NOT NULL,  -- a tab's name or a presentation's id (p_…); never 'main'
    position  INTEGER NOT NULL CHECK (position >= 1),  -- creation order: tab order; a presenter's stack first
    kind      TEXT    NOT NULL CHECK (kind IN ('tab', 'sheet', 'fullScreenCover')),
    presenter TEXT    REFERENCES screen_contexts (id),  -- the screen presenting it; NULL for a tab
    PRIMARY KEY (session, id),
    CHECK (id <> 'main'),
    CHECK ((kind = 'tab') = (presenter IS NULL))
) STRICT, WITHOUT ROWID;

CREATE INDEX screen_stacks_by_presenter ON screen_stacks (presenter);

-- The selected stack: 'main' or a tab's id.
ALTER TABLE sessions ADD COLUMN selected_stack TEXT NOT NULL DEFAULT 'main';
