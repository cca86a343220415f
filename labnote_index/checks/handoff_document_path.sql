-- check: handoff_document_path
-- severity: error
-- protects: manifest (and packet template) document paths are relative to the packet directory and stay inside it
-- repair: write the path relative to the packet directory (no leading '/', no '..')
-- reported: a manifest document path of /abs/design.md or ../other-packet/design.md
-- passes: a document path in a sub-directory of the packet, notes/design.md
SELECT 'handoff_packet' AS record_type, d.packet_dir AS record_id, p.manifest AS file,
       'documents[' || d.position || '].path' AS field,
       'document path ' || iif(d.path IS NULL, 'null', quote(d.path))
       || ' must be relative to the packet directory and stay inside it' AS message
FROM handoff_documents d JOIN handoff_packets p USING (packet_dir)
WHERE d.path IS NULL OR d.path = '' OR d.path LIKE '/%' OR d.path = '..' OR d.path LIKE '../%'
   OR d.path LIKE '%/../%' OR d.path LIKE '%/..'
UNION ALL
SELECT 'handoff_template', t.manifest, t.manifest, 'documents[' || d.key || '].path',
       'document path ' || iif(d.value IS NULL, 'null', quote(d.value))
       || ' must be relative to the packet directory and stay inside it'
FROM handoff_templates t, json_each(t.documents) d
WHERE d.value IS NULL OR d.value = '' OR d.value LIKE '/%' OR d.value = '..' OR d.value LIKE '../%'
   OR d.value LIKE '%/../%' OR d.value LIKE '%/..'
