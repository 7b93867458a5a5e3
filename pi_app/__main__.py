"""``python -m pi_app`` is ``tikiboard``."""

from pi_app.cli import main

main()
