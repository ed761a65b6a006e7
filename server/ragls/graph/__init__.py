"""The code graph: definitions, references and imports per file, read from the chunker's parse
in the lexical pass (extract.py, by the queries in queries.py), kept as rows in the index's
manifest (rows.py), and answered from there on demand: references and relations by name and
import scope (resolve.py, relations.py), a ranked outline of the repository (repo_map.py)."""
