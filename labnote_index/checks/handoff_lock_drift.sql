-- check: handoff_lock_drift
-- severity: error
-- protects: a locked packet is what its consumers read: every locked file still has its recorded sha256, and every file of the packet is in the lock
-- repair: restore the locked content; a change after handoff belongs in a new packet-vNNN (or relock while the packet is still the owner's)
SELECT 'handoff_packet' AS record_type, f.packet_dir AS record_id, f.lock_file AS file,
       'files' AS field,
       CASE WHEN f.current_sha256 IS NULL THEN 'locked file ' || quote(f.path) || ' is missing'
            ELSE 'lock drift: ' || quote(f.path) || ' has sha256 ' || substr(f.current_sha256, 1, 12)
                 || '..., the lock recorded ' || substr(coalesce(f.recorded_sha256, ''), 1, 12) || '...'
       END AS message, f.path AS subject
FROM locked_files f
WHERE f.current_sha256 IS NOT f.recorded_sha256
UNION ALL
SELECT 'handoff_packet', l.packet_dir, l.lock_file, 'files',
       'packet file ' || quote(h.path) || ' is not covered by the lock', h.path
FROM packet_locks l JOIN handoff_files h ON h.packet_dir = l.packet_dir
WHERE h.path != 'packet.lock.json'
  AND NOT EXISTS (SELECT 1 FROM locked_files f WHERE f.lock_file = l.lock_file AND f.path = h.path)
