-- check: derivative_unresolved
-- severity: error
-- protects: derivative_of lineage is unbroken: each entry names a packet or response that exists
-- repair: correct the ID, or add the upstream packet or response to the registry
-- reported: derivative_of ["20260101-claude-missing"] where no packet or response has that ID
-- passes: derivative_of naming a response rather than a packet (either record type may be a source)
SELECT x.source_type AS record_type, x.source_id AS record_id, x.source_file AS file,
       x.field || '[' || x.position || ']' AS field,
       'each derivative_of entry must resolve to a packet or response: ' || quote(x.target_id)
       || ' does not' AS message
FROM refs x
WHERE x.target_file IS NULL AND x.field = 'derivative_of'
