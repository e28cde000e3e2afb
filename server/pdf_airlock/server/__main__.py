"""``python -m pdf_airlock.server``: same as the ``pdf-airlock`` console script."""

from pdf_airlock.server.cli.main import main

main()
