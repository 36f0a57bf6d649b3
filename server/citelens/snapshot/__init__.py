"""A local copy of the scholarly indexes, built from their public bulk dumps.

``dump.py`` (what every reader yields), one reader per dump (``openalex``, ``crossref``,
``arxiv``, ``dblp``), ``store.py`` (the SQLite + FTS5 index) and ``build.py`` (dumps ->
index, with the subset options of ``citelens snapshot build``).
"""
