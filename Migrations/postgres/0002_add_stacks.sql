-- Several stacks per session (issue 16, docs/Stacks.md): the counterpart of Migrations/0003
-- (SQLite). A screen belongs to the session's main stack, to a tab or to a presentation, and its
-- position is unique within its stack rather than within the session. PostgreSQL changes the
-- UNIQUE constraint in place (SQLite rebuilds its tables); the rows end up the same in both stores.

ALTER TABLE screen_contexts ADD COLUMN stack text COLLATE "C" NOT NULL DEFAULT 'main';
-- 'main', or the id of a row of screen_stacks.

ALTER TABLE screen_contexts DROP CONSTRAINT screen_contexts_session_idx_key;
ALTER TABLE screen_contexts ADD CONSTRAINT screen_contexts_session_stack_idx_key UNIQUE (session, stack, idx);

-- The stacks of a session besides its main stack: tabs and presentations.
CREATE TABLE screen_stacks (
    session   text COLLATE "C" NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id        text COLLATE "C" NOT NULL,  -- a tab's name or a presentation's id (p_…); never 'main'
    position  integer NOT NULL CHECK (position >= 1),  -- creation order: tab order; a presenter's stack first
    kind      text    NOT NULL CHECK (kind IN ('tab', 'sheet', 'fullScreenCover')),
    presenter text COLLATE "C" REFERENCES screen_contexts (id),  -- the screen presenting it; NULL for a tab
    PRIMARY KEY (session, id),
    CHECK (id <> 'main'),
    CHECK ((kind = 'tab') = (presenter IS NULL))
);

CREATE INDEX screen_stacks_by_presenter ON screen_stacks (presenter);

-- The selected stack: 'main' or a tab's id.
ALTER TABLE sessions ADD COLUMN selected_stack text COLLATE "C" NOT NULL DEFAULT 'main';

-- Records the selected stack: NV422 when the session does not exist (as SQLite's store checks
-- that its UPDATE touched one row).
CREATE FUNCTION navigation_values_select_stack(session_id text, stack_id text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE sessions SET selected_stack = stack_id WHERE id = session_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'session % does not exist', session_id USING ERRCODE = 'NV422';
    END IF;
END
$$;
