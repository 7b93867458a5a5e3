"""What the developers run from a checkout and the station never does: the benchmarks
(``tools/bench``) and the renderer of the docs' pictures (``tools/render_docs.py``).

Kept out of the ``pi_app`` package so a Pi installs only what runs (the wheel has no ``tools``);
run them from the repository root, e.g. ``.venv/bin/python -m tools.bench.accuracy``.
"""
