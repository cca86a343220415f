-- check: timestamp_order
-- severity: error
-- protects: time runs forward: nothing a record says happened to it (a decision, an acceptance, a last visit) happened before the record was created
-- repair: correct whichever timestamp is wrong: the later one, or created_at
-- scope: record
-- reported: a response decided_at one second before its created_at
-- passes: decided_at equal to created_at
SELECT record_type, record_id, file, field,
       field || ' ' || at || ' is before created_at ' || created_at AS message
FROM record_events
WHERE julianday(at) < julianday(created_at)
