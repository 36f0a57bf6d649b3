"""Papers as PDFs: the printed reference list read into entries the engine verifies.

``extract.py`` (PDFium in a limited child process: the lines and their layout),
``layout.py`` (the reference section, running headers left out, split into references
with their printed labels), ``fields.py`` (each reference's authors, title, year, venue and
identifiers, and whether they were read with confidence), ``read.py`` (a PDF to references
or one line saying why not, and each reference as the entry the engine verifies: no BibTeX).
"""
