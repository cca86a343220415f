-- check: input_packet_unresolved
-- severity: error
-- protects: every input_packets entry names an upstream manifest that exists, so a packet's inputs can be audited
-- repair: correct the manifest path (repository-relative, exact packet-vNNN), or restore the upstream packet
-- reported: an input_packets entry whose manifest path names no manifest
-- passes: an entry naming a manifest of another role's packet that exists
SELECT 'handoff_packet' AS record_type, i.consumer AS record_id, p.manifest AS file,
       'input_packets[' || i.position || '].manifest' AS field,
       'input packet manifest ' || iif(i.manifest IS NULL, 'null', quote(i.manifest)) || ' does not exist' AS message
FROM input_packets i JOIN handoff_packets p ON p.packet_dir = i.consumer
WHERE i.upstream IS NULL
