"""``python -m server``: same as the ``pdf-airlock`` console script."""

from server.cli import main

main()
