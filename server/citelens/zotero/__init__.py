"""Zotero and Better BibTeX: a .bib a Better BibTeX auto-export writes is fixed in the Zotero
item, and the fix comes back through the export (docs/zotero.md)."""
