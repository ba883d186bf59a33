-- Each event's size in bytes, so that a page of history is cut to its byte budget from the sizes
-- alone: the page's read measures the events it may send before it reads any of their JSON, and
-- stops at the first that does not fit.
--
-- bytes is the length of json in UTF-8 bytes, written with the event. Rows written before this
-- migration (or by an older binary) have NULL, and the reads measure their json instead
-- (coalesce(bytes, length(CAST(json AS BLOB)))): nothing is rewritten here.

ALTER TABLE events ADD COLUMN bytes INTEGER CHECK (bytes >= 0);
