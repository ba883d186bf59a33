-- Reserved: the number of the log-first commits migration, which comes from its own branch and
-- replaces this file when both are merged (the migrator takes versions without gaps).
SELECT 1;
