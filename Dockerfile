# Minimal image; the hardened multi-stage build with its own seccomp profile comes with the
# container issue. BASE can be swapped for a locally built Debian bookworm + Python 3.11 image.
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}
WORKDIR /app
COPY pyproject.toml constraints.txt README.md ./
COPY server ./server
COPY worker ./worker
RUN python -m pip install --no-cache-dir -c constraints.txt . \
    && useradd --system --uid 10001 --no-create-home airlock
USER 10001
ENTRYPOINT ["pdf-airlock", "serve", "--root", "/data"]
