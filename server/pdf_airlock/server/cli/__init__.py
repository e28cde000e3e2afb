"""The console script ``pdf-airlock`` (``main``) and the ``self-test`` table (``selftest``): the
top floor, which nothing else imports."""
