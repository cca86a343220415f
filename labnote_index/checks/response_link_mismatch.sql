-- check: response_link_mismatch
-- severity: error
-- scope: linked
-- protects: a packet's response_packet_id and that response's source_packet_id agree, so the question-answer pair reads the same from both ends
-- repair: correct response_packet_id on the packet or source_packet_id on the response
-- reported: packet P response_packet_id R where R's source_packet_id names another packet
-- passes: R's source_packet_id P with P's response_packet_id null
SELECT 'packet' AS record_type, p.packet_id AS record_id, p.file, 'response_packet_id' AS field,
       'response_packet_id ' || quote(p.response_packet_id) || ' names a response whose source_packet_id is '
       || iif(r.source_packet_id IS NULL, 'null', quote(r.source_packet_id)) || ', not this packet' AS message
FROM refs x
JOIN packets p ON p.file = x.source_file
JOIN responses r ON r.file = x.target_file
WHERE x.field = 'response_packet_id' AND r.source_packet_id IS NOT p.packet_id
