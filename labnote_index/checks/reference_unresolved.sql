-- check: reference_unresolved
-- severity: error
-- protects: every typed reference (source packet, response packet, reply_to, response_message_id, related packet/response, a notification's message, a visit's packet) names a record of the right type that exists
-- repair: create the missing record, or correct the ID in the field
-- reported: a response whose source_packet_id names no packet
-- passes: a null source_packet_id where the contract allows null
SELECT x.source_type AS record_type, x.source_id AS record_id, x.source_file AS file, x.field,
       CASE WHEN x.field = 'visit_id'
            THEN 'a visit signs off packet ' || quote(x.target_id) || ' (its ID without -visit)'
            ELSE x.field || ' ' || quote(x.target_id) END
       || ' must resolve to a ' || (SELECT group_concat(rule.target_type, ' or ')
                                    FROM reference_rules rule
                                    WHERE rule.source_type = x.source_type AND rule.field = x.field)
       || ', and none has that ID'
       || coalesce(' (it is the ID of a ' || (SELECT min(o.record_type) FROM records o
                                                WHERE o.record_id = x.target_id) || ')', '')
       AS message, x.target_id AS subject
FROM refs x
WHERE x.target_file IS NULL AND x.field != 'derivative_of'
