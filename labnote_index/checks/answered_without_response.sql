-- check: answered_without_response
-- severity: warning
-- scope: linked
-- protects: a packet marked answered can be followed to its answer
-- repair: add the response record (source_packet_id = this packet), or set the packet back to in_review
-- reported: a packet with status answered that no response names as its source_packet_id
-- passes: an answered packet that a response answers (source_packet_id), though the packet's own response_packet_id is null
SELECT p.record_type, p.record_id, p.file, 'status' AS field,
       'packet is answered but no response has source_packet_id ' || quote(p.record_id) AS message
FROM records p
WHERE p.record_type = 'packet' AND p.status = 'answered'
  AND NOT EXISTS (SELECT 1 FROM refs x
                  WHERE x.field = 'source_packet_id' AND x.target_file = p.file)
