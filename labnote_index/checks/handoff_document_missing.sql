-- check: handoff_document_missing
-- severity: error
-- protects: every document a manifest lists as required (the default) is in the packet
-- repair: add the document to the packet directory, or mark it "required": false
-- reported: a manifest listing design.md (required by default) in a packet that has no design.md
-- passes: a listed document marked "required": false that is absent
SELECT 'handoff_packet' AS record_type, d.packet_dir AS record_id, p.manifest AS file,
       'documents[' || d.position || '].path' AS field,
       'required document ' || quote(d.path) || ' is not in the packet' AS message
FROM handoff_documents d JOIN handoff_packets p USING (packet_dir)
WHERE d.required AND NOT d.[exists]
  AND d.path NOT LIKE '/%' AND d.path NOT LIKE '../%' AND d.path NOT LIKE '%/../%'
