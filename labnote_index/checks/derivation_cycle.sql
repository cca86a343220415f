-- check: derivation_cycle
-- severity: error
-- protects: derivative_of lineage runs from sources to derived work, never in a circle
-- repair: remove the derivative_of entry that points back down the lineage
WITH RECURSIVE walk(start, current) AS (
    SELECT source_file, target_file FROM refs
    WHERE field = 'derivative_of' AND target_file IS NOT NULL
    UNION
    SELECT walk.start, x.target_file
    FROM walk JOIN refs x ON x.source_file = walk.current
    WHERE x.field = 'derivative_of' AND x.target_file IS NOT NULL AND walk.current != walk.start
)
SELECT r.record_type, r.record_id, r.file, 'derivative_of' AS field,
       r.record_type || ' is on a derivative_of cycle: its lineage leads back to itself' AS message
FROM walk JOIN records r ON r.file = walk.start
WHERE walk.current = walk.start
