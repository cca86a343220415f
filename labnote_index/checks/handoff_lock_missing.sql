-- check: handoff_lock_missing
-- severity: warning
-- protects: strict handoff: a ready_for_next_role packet is locked, so drift after handoff can be seen
-- repair: write packet.lock.json with the sha256 of every file of the packet
-- reported: a ready_for_next_role packet without packet.lock.json
-- passes: a draft or blocked packet without a lock (only a handed-on packet needs one)
SELECT 'handoff_packet' AS record_type, p.packet_dir AS record_id, p.manifest AS file,
       'status' AS field, 'ready_for_next_role packet has no packet.lock.json' AS message
FROM handoff_packets p
WHERE p.status = 'ready_for_next_role'
  AND NOT EXISTS (SELECT 1 FROM packet_locks l WHERE l.packet_dir = p.packet_dir)
