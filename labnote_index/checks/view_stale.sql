-- check: view_stale
-- severity: error
-- protects: the committed CSV registries and registry/INDEX.md say what the JSON records say (they are generated, read-only views; upstream CI fails on any difference but line endings)
-- repair: run 'labnote-index views REPO' and commit the regenerated views; never edit them by hand
-- fix: write the views anew from the records
-- reported: registry/packets.csv missing a row for a packet added since it was generated
-- passes: the same view with CRLF line endings (line endings are not compared)
SELECT NULL AS record_type, NULL AS record_id, g.path AS file, '' AS field,
       CASE WHEN f.path IS NULL
            THEN 'generated view is missing while the other views are committed'
            ELSE 'generated view is stale: it differs from what the JSON records give'
       END AS message
FROM generated_views g
LEFT JOIN files f ON f.path = g.path
WHERE f.text_sha256 IS NOT g.sha256
  AND EXISTS (SELECT 1 FROM files WHERE kind = 'view')
