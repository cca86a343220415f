-- check: handoff_immutable
-- severity: error
-- protects: a ready_for_next_role or superseded packet is what its consumers read: its manifest and files never change
-- repair: restore the packet as it was and make the change in a new packet-vNNN
-- reported: a file of a ready_for_next_role packet edited in the change
-- passes: a draft packet edited, or a new packet-v002 added beside a locked v001
WITH frozen AS (
    SELECT p.packet_dir, p.manifest, p.status FROM base.handoff_packets p
    WHERE p.status IN ('ready_for_next_role', 'superseded')
),
changed AS (
    SELECT f.packet_dir, b.path, 'changed' AS how
    FROM frozen f JOIN base.handoff_files b ON b.packet_dir = f.packet_dir
    JOIN handoff_files h ON h.packet_dir = b.packet_dir AND h.path = b.path
    WHERE h.sha256 IS NOT b.sha256
    UNION ALL
    SELECT f.packet_dir, b.path, 'removed'
    FROM frozen f JOIN base.handoff_files b ON b.packet_dir = f.packet_dir
    WHERE NOT EXISTS (SELECT 1 FROM handoff_files h
                      WHERE h.packet_dir = b.packet_dir AND h.path = b.path)
    UNION ALL
    SELECT f.packet_dir, h.path, 'added'
    FROM frozen f JOIN handoff_files h ON h.packet_dir = f.packet_dir
    WHERE NOT EXISTS (SELECT 1 FROM base.handoff_files b
                      WHERE b.packet_dir = h.packet_dir AND b.path = h.path)
)
SELECT 'handoff_packet' AS record_type, c.packet_dir AS record_id, f.manifest AS file,
       c.path AS field,
       c.path || ' ' || c.how || ' in a packet that was ' || f.status || ' at base' AS message
FROM changed c JOIN frozen f USING (packet_dir)
