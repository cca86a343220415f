-- check: handoff_unknown_field
-- severity: off
-- protects: with strict validation asked for (severity handoff_unknown_field = "warning" or "error" in the configuration), manifests, templates, input_packets entries and locks carry only the fields packet-schema.md names; off by default, since new manifest fields are additive
-- repair: remove the field, or leave this check off: packet-schema.md's compatibility rules keep unknown fields
-- reported: (turned on) a manifest with a field packet-schema.md does not list
-- passes: the same manifest with the check left off, its default
SELECT 'handoff_packet' AS record_type, p.packet_dir AS record_id, p.manifest AS file,
       k.key AS field, 'unknown manifest field ' || quote(k.key) AS message
FROM handoff_packets p, json_each(p.extra) k
UNION ALL
SELECT 'handoff_packet', i.consumer, p.manifest, 'input_packets[' || i.position || '].' || k.key,
       'unknown input_packets field ' || quote(k.key)
FROM input_packets i JOIN handoff_packets p ON p.packet_dir = i.consumer, json_each(i.extra) k
UNION ALL
SELECT 'handoff_template', t.manifest, t.manifest, k.key, 'unknown manifest field ' || quote(k.key)
FROM handoff_templates t, json_each(t.extra) k
UNION ALL
SELECT 'handoff_packet', l.packet_dir, l.lock_file, k.key, 'unknown lock field ' || quote(k.key)
FROM packet_locks l, json_each(l.extra) k
