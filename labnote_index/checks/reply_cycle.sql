-- check: reply_cycle
-- severity: error
-- protects: reply chains are threads with a first message, not loops
-- repair: set reply_to of one message on the cycle to the message it really answers (or null for the first message)
-- reported: message A reply_to B and B reply_to A (reported once)
-- passes: a long thread, each message replying to the one before
SELECT r.record_type, r.record_id, r.file, 'reply_to' AS field,
       'message is on a reply_to cycle: following reply_to from it comes back to it' AS message
FROM cycle_members c JOIN records r ON r.file = c.node
WHERE c.relation = 'reply_to'
