-- check: input_packet_cycle
-- severity: error
-- protects: handoff lineage flows one way: no packet is (through its inputs) its own input
-- repair: remove the input_packets entry that points back down the chain
-- reported: packet A takes B as input and B takes A (reported once for the cycle)
-- passes: two packets taking the same upstream packet as input
SELECT 'handoff_packet' AS record_type, p.packet_dir AS record_id, p.manifest AS file,
       'input_packets' AS field,
       'packet is on an input_packets cycle: its inputs lead back to itself' AS message
FROM cycle_members c JOIN handoff_packets p ON p.packet_dir = c.node
WHERE c.relation = 'input_packets'
