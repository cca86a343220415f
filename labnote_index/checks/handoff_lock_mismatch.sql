-- check: handoff_lock_mismatch
-- severity: error
-- protects: a lock belongs to the manifest beside it: same role, milestone and packet_version
-- repair: regenerate packet.lock.json from the manifest, or remove a lock that has no manifest
-- reported: a packet.lock.json that says packet_version v001 beside a manifest that says v002
-- passes: a lock and manifest that agree on role, milestone and packet_version
SELECT 'handoff_packet' AS record_type, l.packet_dir AS record_id, l.lock_file AS file,
       '' AS field, 'packet.lock.json has no handoff.manifest.json beside it' AS message
FROM packet_locks l
WHERE NOT EXISTS (SELECT 1 FROM handoff_packets p WHERE p.packet_dir = l.packet_dir)
UNION ALL
SELECT 'handoff_packet', l.packet_dir, l.lock_file, 'role',
       'lock role ' || quote(l.role) || ' disagrees with the manifest role ' || quote(p.role)
FROM packet_locks l JOIN handoff_packets p USING (packet_dir) WHERE l.role IS NOT p.role
UNION ALL
SELECT 'handoff_packet', l.packet_dir, l.lock_file, 'milestone',
       'lock milestone ' || quote(l.milestone) || ' disagrees with the manifest milestone '
       || quote(p.milestone)
FROM packet_locks l JOIN handoff_packets p USING (packet_dir) WHERE l.milestone IS NOT p.milestone
UNION ALL
SELECT 'handoff_packet', l.packet_dir, l.lock_file, 'packet_version',
       'lock packet_version ' || quote(l.packet_version)
       || ' disagrees with the manifest packet_version ' || quote(p.packet_version)
FROM packet_locks l JOIN handoff_packets p USING (packet_dir)
WHERE l.packet_version IS NOT p.packet_version
