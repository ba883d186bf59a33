-- Fewer pages written per mutation (issue 12). A rowid table with a PRIMARY KEY on other columns is
-- two b-trees, the table and the key's index, and a commit writes a page of each; a WITHOUT ROWID
-- table is one b-tree ordered by its primary key (https://sqlite.org/withoutrowid.html).
-- screen_contexts' rows are small and keyed by a text id, so it is rebuilt WITHOUT ROWID: with the
-- store's statements, a push or pop writes 0.9 of a page fewer when it commits alone (10.7 to 9.8)
-- and 0.3 fewer in a commit of 4, the same in a commit of 16, 0.2 more in one of 32.
-- Its three child tables and screen_stacks (whose presenter refers to it) are rebuilt with it, as
-- 0003 did and for the same reason: a migration runs inside a transaction with foreign keys on
-- (PRAGMA foreign_keys cannot change there; https://sqlite.org/lang_altertable.html), so the new
-- tables are created referencing the new screen_contexts and filled, the old ones are dropped
-- children first (so the implicit DELETE of dropping screen_contexts cascades into nothing), and
-- renaming the new ones rewrites every reference to the final names. Every column, CHECK, foreign
-- key, index and ON DELETE CASCADE stays as it was.
--
-- events stays a rowid table. Its rows (an event's JSON, a few hundred bytes) are large for a
-- WITHOUT ROWID b-tree, whose interior pages hold whole rows: rebuilt so, it saved 0.1 of a page
-- per mutation committed alone but cost 0.5 more in a commit of 4 and 0.8 to 1.0 more in commits of
-- 16 to 32, where a rowid table appends every event of the commit to the same page.

CREATE TABLE screen_contexts_new (
    id       TEXT    PRIMARY KEY NOT NULL,
    session  TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    stack    TEXT    NOT NULL DEFAULT 'main',  -- 'main', or the id of a row of screen_stacks
    idx      INTEGER NOT NULL CHECK (idx >= 0),  -- position in its stack, 0 for the stack's root
    name     TEXT    NOT NULL,
    role     TEXT    NOT NULL CHECK (role IN ('screen', 'navigationStack')),
    previous TEXT    REFERENCES screen_contexts_new (id),  -- a presentation's root: its presenter
    UNIQUE (session, stack, idx)
) STRICT, WITHOUT ROWID;

-- While a screen is copied before the one it links to, the link is an outstanding violation, and each
-- later insert looks for screens linking to it: through this index, not by scanning the table (a
-- scan per row made the copy quadratic). It takes the final name once the old table is gone.
CREATE INDEX screen_contexts_new_by_previous ON screen_contexts_new (previous);

INSERT INTO screen_contexts_new (id, session, stack, idx, name, role, previous)
SELECT id, session, stack, idx, name, role, previous FROM screen_contexts ORDER BY id;

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

CREATE TABLE screen_stacks_new (
    session   TEXT    NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id        TEXT    NOT NULL,  -- a tab's name or a presentation's id (p_…); never 'main'
    position  INTEGER NOT NULL CHECK (position >= 1),  -- creation order: tab order; a presenter's stack first
    kind      TEXT    NOT NULL CHECK (kind IN ('tab', 'sheet', 'fullScreenCover')),
    presenter TEXT    REFERENCES screen_contexts_new (id),  -- the screen presenting it; NULL for a tab
    PRIMARY KEY (session, id),
    CHECK (id <> 'main'),
    CHECK ((kind = 'tab') = (presenter IS NULL))
) STRICT, WITHOUT ROWID;

INSERT INTO screen_stacks_new (session, id, position, kind, presenter)
SELECT session, id, position, kind, presenter FROM screen_stacks;

DROP TABLE screen_stacks;
DROP TABLE context_values;
DROP TABLE preference_handlers;
DROP TABLE received_preferences;
DROP TABLE screen_contexts;

ALTER TABLE screen_contexts_new RENAME TO screen_contexts;
ALTER TABLE context_values_new RENAME TO context_values;
ALTER TABLE preference_handlers_new RENAME TO preference_handlers;
ALTER TABLE received_preferences_new RENAME TO received_preferences;
ALTER TABLE screen_stacks_new RENAME TO screen_stacks;

DROP INDEX screen_contexts_new_by_previous;
CREATE INDEX screen_contexts_by_previous ON screen_contexts (previous);
CREATE INDEX screen_stacks_by_presenter ON screen_stacks (presenter);
