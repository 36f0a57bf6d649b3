"""The venue check (``citelens check FOLDER --venue OUT``): an adapter over the same engine as
``cli/`` and ``lsp/``. ``run.py`` streams a folder of papers through ``workspace/check.run_check``
and one store of settled verdicts; ``evidence.py`` classes an entry and says why, ``health.py``
watches the run (a source down, "not found" jumping) and decides its exit, ``cleared.py`` reads a
chair's cleared file, ``page.py`` writes summary.html and a page per paper."""
