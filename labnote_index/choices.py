"""The values the library and the command line both offer, kept where loading
them loads nothing else: the CLI builds its options (defaults, choices) from
these before it knows whether a command will run at all."""

DEFAULT_DB = "labnote.db"
# A lineage query's directions: ancestors, descendants, both.
DIRECTIONS = ("up", "down", "both")
# The serialisations of a PROV export (output/provenance.py).
PROV_FORMATS = ("prov-json", "prov-n", "prov-o", "prov-xml")
