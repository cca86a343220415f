-- check: handoff_document_path
-- severity: error
-- protects: manifest document paths are relative to the packet directory and stay inside it
-- repair: write the path relative to the packet directory (no leading '/', no '..')
SELECT 'handoff_packet' AS record_type, d.packet_dir AS record_id, p.manifest AS file,
       'documents[' || d.position || '].path' AS field,
       'document path ' || iif(d.path IS NULL, 'null', quote(d.path))
       || ' must be relative to the packet directory and stay inside it' AS message
FROM handoff_documents d JOIN handoff_packets p USING (packet_dir)
WHERE d.path IS NULL OR d.path = '' OR d.path LIKE '/%' OR d.path = '..' OR d.path LIKE '../%'
   OR d.path LIKE '%/../%' OR d.path LIKE '%/..'
