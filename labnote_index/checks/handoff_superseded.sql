-- check: handoff_superseded
-- severity: error
-- protects: a superseded packet points forward: a newer packet-vNNN of the same role and milestone exists
-- repair: add the newer packet version, or set the status back to what it was
-- reported: packet-v001 marked superseded where no packet-v002 (or later) of that role and milestone exists
-- passes: packet-v001 superseded by a packet-v003 (versions need not be consecutive)
SELECT 'handoff_packet' AS record_type, p.packet_dir AS record_id, p.manifest AS file,
       'status' AS field,
       'superseded, but no newer packet of ' || p.role || '/' || p.milestone || ' exists' AS message
FROM handoff_packets p
WHERE p.status = 'superseded'
  AND NOT EXISTS (SELECT 1 FROM handoff_packets n
                  WHERE n.role = p.role AND n.milestone = p.milestone
                    AND n.version_number > p.version_number)
