-- check: reply_cycle
-- severity: error
-- protects: reply chains are threads with a first message, not loops
-- repair: set reply_to of one message on the cycle to the message it really answers (or null for the first message)
WITH RECURSIVE walk(start, current) AS (
    SELECT source_file, target_file FROM refs
    WHERE field = 'reply_to' AND target_file IS NOT NULL
    UNION
    SELECT walk.start, x.target_file
    FROM walk JOIN refs x ON x.source_file = walk.current
    WHERE x.field = 'reply_to' AND x.target_file IS NOT NULL AND walk.current != walk.start
)
SELECT r.record_type, r.record_id, r.file, 'reply_to' AS field,
       'message is on a reply_to cycle: following reply_to from it comes back to it' AS message
FROM walk JOIN records r ON r.file = walk.start
WHERE walk.current = walk.start
