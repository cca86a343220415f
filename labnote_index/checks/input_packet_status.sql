-- check: input_packet_status
-- severity: error
-- protects: status_at_consumption records a real manifest status (draft, blocked, ready_for_next_role, superseded)
-- repair: write the upstream manifest's status as it was when the packet was read
-- reported: status_at_consumption accepted
-- passes: status_at_consumption superseded (a consumer may record that it read an older packet)
SELECT 'handoff_packet' AS record_type, i.consumer AS record_id, p.manifest AS file,
       'input_packets[' || i.position || '].status_at_consumption' AS field,
       'status_at_consumption ' || iif(i.status_at_consumption IS NULL, 'null', quote(i.status_at_consumption))
       || ' is not a manifest status' AS message
FROM input_packets i JOIN handoff_packets p ON p.packet_dir = i.consumer
WHERE i.status_at_consumption IS NULL
   OR i.status_at_consumption NOT IN (SELECT status FROM handoff_statuses)
