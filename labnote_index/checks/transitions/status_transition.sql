-- check: status_transition
-- severity: error
-- protects: statuses move only along their lifecycles (answered never returns to new, archived and retired are terminal, confirmed never goes back to needed)
-- repair: restore the status it had, or make the change a new record (a new request is a new message)
-- reported: a packet's status changed from answered back to new
-- passes: new to answered, along the lifecycle
SELECT h.record_type, h.record_id, h.file, 'status' AS field,
       h.record_type || ' status moved ' || quote(b.status) || ' -> ' || quote(h.status)
       || ', which its lifecycle does not allow' AS message
FROM records h
JOIN record_pairs p ON p.head_file = h.file
JOIN base.records b ON b.file = p.base_file
WHERE h.record_type != 'visit' AND b.status IS NOT h.status
  AND NOT EXISTS (SELECT 1 FROM status_transitions t
                  WHERE t.record_type = h.record_type
                    AND t.from_status = b.status AND t.to_status = h.status)
