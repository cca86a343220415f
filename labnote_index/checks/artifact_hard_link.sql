-- check: artifact_hard_link
-- severity: warning
-- protects: an artifact is a file of the repository; a hard link may give it the content of a file outside, which no path shows
-- repair: replace the hard link with a copy of the file (git never makes hard links: one here was made by hand)
-- reported: a packet whose artifact file has a link count of 2 (a hard link made with ln)
-- passes: an artifact that is a second, ordinary copy of the same content
SELECT r.record_type, r.record_id, r.file, r.artifact_field AS field,
       r.artifact_field || ' names ' || a.path || ', a file with ' || a.links
       || ' hard links: its content may be another file''s, outside the repository; '
       || 'it was hashed but not indexed for search' AS message
-- The artifacts first (CROSS JOIN keeps that order): the few with a second link
-- are looked up among the records by path, not every record's artifact looked up.
FROM artifacts a CROSS JOIN records r ON r.artifact_path = a.path
WHERE a.links > 1
