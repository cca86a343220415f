-- check: duplicate_id
-- severity: error
-- protects: IDs are unique per record type, so every reference names exactly one record
-- repair: give one of the records a new ID (and file name), and update references that meant it
-- reported: two packet files, in different directories, whose packet_id is the same
-- passes: a packet and a response that share a topic but have different IDs, or the same ID string used by two record types
-- Each copy names the first five files of its ID and counts the rest: a finding
-- that listed every other copy would make N copies cost N * N. Groups are found
-- in the order of the (record_id, record_type) index, without a sort.
WITH groups AS (
    SELECT record_id, record_type, count(*) AS n
    FROM records
    WHERE record_id IS NOT NULL
    GROUP BY record_id, record_type
    HAVING count(*) > 1
),
copies AS (
    SELECT r.record_type, r.record_id, r.file, g.n,
           row_number() OVER (PARTITION BY r.record_type, r.record_id ORDER BY r.file) AS nth
    FROM groups g JOIN records r ON r.record_id = g.record_id AND r.record_type = g.record_type
),
named AS (
    SELECT record_type, record_id, group_concat(file, ', ') AS files
    FROM (SELECT * FROM copies WHERE nth <= 5 ORDER BY file)
    GROUP BY record_type, record_id
)
SELECT c.record_type, c.record_id, c.file, t.id_field AS field,
       'IDs are unique per record type: ' || c.record_type || ' ' || quote(c.record_id)
       || ' is in ' || c.n || ' files: ' || g.files
       || CASE WHEN c.n > 5 THEN ' and ' || (c.n - 5) || ' more' ELSE '' END AS message,
       c.file AS subject
FROM copies c
JOIN named g ON g.record_type = c.record_type AND g.record_id = c.record_id
JOIN record_types t ON t.record_type = c.record_type
