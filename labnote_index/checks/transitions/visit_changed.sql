-- check: visit_changed
-- severity: error
-- protects: visits are append-only signoffs: once written they never change
-- repair: restore the visit as it was; record anything new in a new visit
-- reported: a visit's notes edited after it was written
-- passes: a new visit added
SELECT 'visit' AS record_type, h.record_id, h.file, '' AS field,
       'visit ' || quote(h.record_id) || ' changed; visits are append-only' AS message
FROM records h
JOIN record_pairs p ON p.head_file = h.file
JOIN base.records b ON b.file = p.base_file
JOIN record_json hj ON hj.file = h.file
JOIN base.record_json bj ON bj.file = b.file
WHERE h.record_type = 'visit' AND json(hj.json) IS NOT json(bj.json)
