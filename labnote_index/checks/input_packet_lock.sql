-- check: input_packet_lock
-- severity: warning
-- protects: a consumer that took its input as ready_for_next_role relies on the upstream lock, which must exist
-- repair: ask the upstream role to write packet.lock.json, or record status_at_consumption as it really was
-- reported: an input taken with status_at_consumption ready_for_next_role from a packet that has no lock
-- passes: an input taken as draft from an unlocked packet
SELECT 'handoff_packet' AS record_type, i.consumer AS record_id, c.manifest AS file,
       'input_packets[' || i.position || ']' AS field,
       'consumed ' || i.upstream || ' as ready_for_next_role, but it has no packet.lock.json'
       AS message
FROM input_packets i
JOIN handoff_packets c ON c.packet_dir = i.consumer
WHERE i.status_at_consumption = 'ready_for_next_role' AND i.upstream IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM packet_locks l WHERE l.packet_dir = i.upstream)
