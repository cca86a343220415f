-- check: handoff_ready_blocked
-- severity: error
-- protects: a packet handed on as ready_for_next_role is not blocked
-- repair: set blocked to false once the blocker is gone, or set the status back to blocked
-- reported: a manifest with status ready_for_next_role and blocked true
-- passes: a manifest with status blocked and blocked true
SELECT 'handoff_packet' AS record_type, packet_dir AS record_id, manifest AS file, 'blocked' AS field,
       'a ready_for_next_role packet must have blocked = false' AS message
FROM handoff_packets
WHERE status = 'ready_for_next_role' AND blocked IS NOT 0
