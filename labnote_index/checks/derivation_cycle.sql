-- check: derivation_cycle
-- severity: error
-- protects: derivative_of lineage runs from sources to derived work, never in a circle
-- repair: remove the derivative_of entry that points back down the lineage
-- reported: packet A derivative_of B and B derivative_of A (reported once, on the cycle, not twice)
-- passes: two packets derived from the same source (a diamond, not a circle)
SELECT r.record_type, r.record_id, r.file, 'derivative_of' AS field,
       r.record_type || ' is on a derivative_of cycle: its lineage leads back to itself' AS message
FROM cycle_members c JOIN records r ON r.file = c.node
WHERE c.relation = 'derivative_of'
