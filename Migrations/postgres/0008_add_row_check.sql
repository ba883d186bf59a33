-- A check the store puts after a statement that must change exactly one row, in the same
-- pipeline: the statements of a mutation are written once for SQLite and PostgreSQL, and where
-- SQLite's writer counts the rows a statement changed before it runs the next, a pipeline
-- cannot, so the count is checked on the server:
--
--     WITH changed AS (UPDATE ... RETURNING 1)
--     SELECT navigation_values_expect_one_row((SELECT count(*) FROM changed), 'session s_1 does not exist')
--
-- NV422 fails the mutation as invalid data (the row it targets does not exist), as the functions
-- of 0001 and 0002 do; those stay for instances of an older binary still running.

CREATE FUNCTION navigation_values_expect_one_row(changed bigint, message text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF changed <> 1 THEN
        RAISE EXCEPTION '%', message USING ERRCODE = 'NV422';
    END IF;
END
$$;
