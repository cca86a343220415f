-- check: causal_order
-- severity: warning
-- scope: linked
-- protects: causes come first across records: a response is created at or after the packet it answers, a reply at or after the message it replies to, a notification at or after the message it relays
-- repair: correct whichever created_at is wrong (the earlier record's, or the later one's); if both are right, the reference names the wrong record
-- reported: a response created at 09:00 that answers a packet created at 10:00 the same day
-- passes: a response created at the very same instant as its packet (at or after is allowed)
-- Time order within a record is the contract's (timestamp_order); across records
-- it is causality, so a warning: clocks of different sessions can disagree. A
-- timestamp julianday cannot read is timestamp_format's, and compares as NULL here.
SELECT s.record_type, s.record_id, s.file, x.field,
       'created ' || s.created_at || ', before the ' || t.record_type || ' ' || quote(t.record_id)
       || ' its ' || x.field || ' names (created ' || t.created_at || ')' AS message,
       x.target_id AS subject
FROM refs x
JOIN records s ON s.file = x.source_file
JOIN records t ON t.file = x.target_file
WHERE ((x.source_type = 'response' AND x.field = 'source_packet_id')
       OR (x.source_type = 'message' AND x.field = 'reply_to')
       OR (x.source_type = 'notification' AND x.field = 'message_id'))
  AND julianday(s.created_at) < julianday(t.created_at)
