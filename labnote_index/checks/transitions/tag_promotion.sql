-- check: tag_promotion
-- severity: error
-- protects: a proposed tag is never accepted in the same change set that proposes or promotes it: acceptance is a separate, operator-reviewed change
-- repair: keep the tag proposed in this change; promote it (acceptance_basis operator_approved_promotion) in a pull request of its own
-- reported: a tag proposed at the base and accepted at the head: promoted and accepted in one change set
-- passes: a tag that was accepted at the base already and stays accepted
SELECT h.record_type, h.record_id, h.file, 'status' AS field,
       'tag ' || quote(h.record_id) || ' is proposed at base and accepted at head: '
       || 'a same-change-set promotion' AS message
FROM records h
JOIN record_pairs p ON p.head_file = h.file
JOIN base.records b ON b.file = p.base_file
WHERE h.record_type = 'tag' AND b.status = 'proposed' AND h.status = 'accepted'
