-- Each event's size in bytes, as Migrations/0009 (SQLite), so that a page of history is cut to
-- its byte budget from the sizes alone: measuring json itself (octet_length(json::text)) would
-- read and decompress every candidate event on the server, however large, before the page is cut.
--
-- bytes is the length of json in UTF-8 bytes, written with the event. Rows written before this
-- migration (or by an older binary) have NULL, and the reads measure their json instead
-- (coalesce(bytes, octet_length(json::text))): nothing is rewritten here, and adding a column
-- without a default does not rewrite the table.

ALTER TABLE events ADD COLUMN bytes integer CHECK (bytes >= 0);
