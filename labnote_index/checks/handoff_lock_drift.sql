-- check: handoff_lock_drift
-- severity: error
-- protects: a locked packet is what its consumers read: every locked file still has its recorded sha256, and every file of the packet is in the lock
-- repair: restore the locked content; a change after handoff belongs in a new packet-vNNN (or relock while the packet is still the owner's)
-- reported: a locked file whose content no longer has the sha256 the lock records, or a file added to a locked packet
-- passes: an unlocked (draft) packet whose files change freely
SELECT 'handoff_packet' AS record_type, d.packet_dir AS record_id, d.lock_file AS file,
       'files' AS field,
       CASE WHEN NOT d.locked THEN 'packet file ' || quote(d.path) || ' is not covered by the lock'
            WHEN d.current_sha256 IS NULL THEN 'locked file ' || quote(d.path) || ' is missing'
            ELSE 'lock drift: ' || quote(d.path) || ' has sha256 ' || substr(d.current_sha256, 1, 12)
                 || '..., the lock recorded ' || substr(coalesce(d.recorded_sha256, ''), 1, 12) || '...'
       END AS message, d.path AS subject
FROM lock_drift d
