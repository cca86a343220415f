-- check: input_packet_consumption
-- severity: warning
-- protects: a consumer says plainly that it took its input as input (consumption_status accepted_as_input)
-- repair: set consumption_status to accepted_as_input, or drop the entry if the packet was not used
-- reported: an input_packets entry with consumption_status referenced_only
-- passes: consumption_status accepted_as_input
SELECT 'handoff_packet' AS record_type, i.consumer AS record_id, p.manifest AS file,
       'input_packets[' || i.position || '].consumption_status' AS field,
       'consumption_status is ' || iif(i.consumption_status IS NULL, 'null', quote(i.consumption_status))
       || ', not accepted_as_input' AS message
FROM input_packets i JOIN handoff_packets p ON p.packet_dir = i.consumer
WHERE i.consumption_status IS NOT 'accepted_as_input'
