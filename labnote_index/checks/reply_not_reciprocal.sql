-- check: reply_not_reciprocal
-- severity: warning
-- scope: linked
-- protects: a message's response_message_id and the answer's reply_to tell the same story
-- repair: set reply_to of the answering message to this message, or correct response_message_id
-- reported: message A response_message_id B where B's reply_to names C
-- passes: B reply_to A with A's response_message_id null (the answer may be recorded on one side only)
SELECT x.source_type AS record_type, x.source_id AS record_id, x.source_file AS file,
       'response_message_id' AS field,
       'response_message_id ' || quote(x.target_id) || ' does not reply_to this message back (its reply_to is '
       || iif(back.target_id IS NULL, 'null', quote(back.target_id)) || ')' AS message
FROM refs x
LEFT JOIN refs back ON back.source_file = x.target_file AND back.field = 'reply_to'
WHERE x.field = 'response_message_id' AND x.target_file IS NOT NULL
  AND (back.target_id IS NULL OR back.target_id != x.source_id)
