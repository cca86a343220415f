-- check: handoff_directory
-- severity: error
-- protects: a packet lives at docs/workflow/roles/<role>/reports/<milestone>/packet-vNNN/ and its manifest says the same role, milestone and packet_version
-- repair: move the packet directory, or correct role, milestone or packet_version in the manifest
-- reported: a manifest in .../roles/architect/reports/m1/packet-v002/ that says packet_version v001
-- passes: a packet directory whose manifest says the same role, milestone and packet_version as its path
SELECT 'handoff_packet' AS record_type, packet_dir AS record_id, manifest AS file, '' AS field,
       'packet is not at docs/workflow/roles/<role>/reports/<milestone>/packet-vNNN/' AS message
FROM handoff_packets WHERE dir_role IS NULL
UNION ALL
SELECT 'handoff_packet', packet_dir, manifest, 'role',
       'manifest role ' || quote(role) || ' disagrees with its directory ' || quote(dir_role)
FROM handoff_packets WHERE dir_role IS NOT NULL AND role IS NOT dir_role
UNION ALL
SELECT 'handoff_packet', packet_dir, manifest, 'milestone',
       'manifest milestone ' || quote(milestone) || ' disagrees with its directory ' || quote(dir_milestone)
FROM handoff_packets WHERE dir_role IS NOT NULL AND milestone IS NOT dir_milestone
UNION ALL
SELECT 'handoff_packet', packet_dir, manifest, 'packet_version',
       'manifest packet_version ' || quote(packet_version) || ' disagrees with its directory '
       || quote(dir_packet_version)
FROM handoff_packets WHERE dir_role IS NOT NULL AND packet_version IS NOT dir_packet_version
