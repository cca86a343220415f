-- check: input_packet_mismatch
-- severity: error
-- protects: an input_packets entry records exactly the upstream role, milestone and packet_version its manifest says
-- repair: copy role, milestone and packet_version from the upstream manifest into the entry
-- reported: an input_packets entry that says milestone m2 of a manifest that says m1
-- passes: an entry whose role, milestone and packet_version equal its upstream manifest's
SELECT 'handoff_packet' AS record_type, i.consumer AS record_id, c.manifest AS file,
       'input_packets[' || i.position || ']' AS field,
       'input packet records ' || coalesce(i.role, '?') || '/' || coalesce(i.milestone, '?') || '/'
       || coalesce(i.packet_version, '?') || ' but its manifest says ' || coalesce(u.role, '?')
       || '/' || coalesce(u.milestone, '?') || '/' || coalesce(u.packet_version, '?') AS message
FROM input_packets i
JOIN handoff_packets c ON c.packet_dir = i.consumer
JOIN handoff_packets u ON u.packet_dir = i.upstream
WHERE i.role IS NOT u.role OR i.milestone IS NOT u.milestone
   OR i.packet_version IS NOT u.packet_version
