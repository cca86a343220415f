-- check: input_packet_cycle
-- severity: error
-- protects: handoff lineage flows one way: no packet is (through its inputs) its own input
-- repair: remove the input_packets entry that points back down the chain
WITH RECURSIVE walk(start, current) AS (
    SELECT consumer, upstream FROM input_packets WHERE upstream IS NOT NULL
    UNION
    SELECT walk.start, i.upstream
    FROM walk JOIN input_packets i ON i.consumer = walk.current
    WHERE i.upstream IS NOT NULL AND walk.current != walk.start
)
SELECT 'handoff_packet' AS record_type, p.packet_dir AS record_id, p.manifest AS file,
       'input_packets' AS field,
       'packet is on an input_packets cycle: its inputs lead back to itself' AS message
FROM walk JOIN handoff_packets p ON p.packet_dir = walk.start
WHERE walk.current = walk.start
