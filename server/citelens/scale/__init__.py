"""Many machines: the venue check (``venue/run.py``) on a Ray cluster (``cluster.py``),
with one rate limiter per source shared by every worker (``limiter.py``). Needs the
optional dependencies of ``pip install 'citelens[scale]'``."""
