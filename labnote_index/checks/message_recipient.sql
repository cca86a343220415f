-- check: message_recipient
-- severity: error
-- protects: every message is addressed to a visitor, a group, or both
-- repair: set to_visitor_id, to_group, or both
SELECT record_type, record_id, file, field, message
FROM validation_problems
WHERE check_id = 'message_recipient'
