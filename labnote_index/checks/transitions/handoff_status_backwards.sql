-- check: handoff_status_backwards
-- severity: error
-- protects: a handoff packet's status only moves forward (draft or blocked -> ready_for_next_role -> superseded)
-- repair: restore the status; a packet that needs more work becomes a new packet-vNNN
-- reported: a manifest's status changed from ready_for_next_role back to draft
-- passes: draft to ready_for_next_role, or ready_for_next_role to superseded
SELECT 'handoff_packet' AS record_type, h.packet_dir AS record_id, h.manifest AS file,
       'status' AS field,
       'handoff packet status went backwards: ' || quote(b.status) || ' -> ' || quote(h.status)
       AS message
FROM handoff_packets h
JOIN base.handoff_packets b ON b.packet_dir = h.packet_dir
JOIN handoff_statuses hs ON hs.status = h.status
JOIN handoff_statuses bs ON bs.status = b.status
WHERE hs.rank < bs.rank
