#!/usr/bin/env bash
# Build and run the pdf-airlock image with no registry: a private dockerd, a bookworm base made
# by mmdebstrap and `docker import`, wheels prepared on the host.
#
#   scripts/container.sh setup     # apt-get install docker.io mmdebstrap (root)
#   scripts/container.sh start     # start a private dockerd (own data root, overlay2)
#   scripts/container.sh build     # base image (once) + wheels + `docker build -t pdf-airlock .`
#   scripts/container.sh stop      # stop that dockerd by its PID and remove its state
#
# Every command uses DOCKER_HOST=unix://$STATE/docker.sock; export it to use docker by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
STATE=${PDF_AIRLOCK_DOCKER_STATE:-/tmp/pdf-airlock-docker}
say() { echo "== $*" >&2; }
export DOCKER_HOST="unix://$STATE/docker.sock"
PYTHON=${PYTHON:-.venv/bin/python}
# tini is the image's PID 1: it reaps the processes orphaned to it (see the Dockerfile).
# OCR: Tesseract's data for the languages most documents are written in, and osd (orientation and
# script detection); Debian's packages (docs/container.md says why this variant). The fallback
# fonts (text in fonts a document does not embed) are the font catalogue's files and packages
# (pdf_airlock.worker.fonts.catalogue, read by `build`): every other file of those packages under
# /usr/share/fonts is left out of the base (dpkg's path-exclude).
OCR_LANGUAGES="eng deu fra spa por ita nld pol ces swe tur rus ukr ell ara heb fas hin ben chi-sim chi-tra jpn kor vie tha ind osd"
BASE_PACKAGES=python3,python3-venv,passwd,tini$(printf ',tesseract-ocr-%s' $OCR_LANGUAGES)
BASE_TAG=bookworm-tini-tesseract-26
CATALOGUE=("$PYTHON" -m pdf_airlock.worker.fonts.catalogue)

setup() {
  command -v dockerd >/dev/null && command -v mmdebstrap >/dev/null && return
  say "installing docker.io and mmdebstrap from Debian (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io mmdebstrap >/dev/null
}

start() {
  mkdir -p "$STATE"
  if [ -S "$STATE/docker.sock" ] && docker info >/dev/null 2>&1; then return; fi
  say "starting a private dockerd ($STATE)"
  /usr/sbin/dockerd --storage-driver overlay2 --data-root "$STATE/root" --exec-root "$STATE/exec" \
    --pidfile "$STATE/dockerd.pid" --host "$DOCKER_HOST" --iptables=false --bridge=none \
    >"$STATE/dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return; sleep 1; done
  echo "dockerd did not start; see $STATE/dockerd.log" >&2
  exit 1
}

build() {
  local packages fonts base
  packages="$BASE_PACKAGES,$("${CATALOGUE[@]}" packages | paste -sd,)"
  fonts=$("${CATALOGUE[@]}" paths)
  # The tag names the package set and the font files, so a base made before a package or a font
  # was added is not reused.
  base="pdf-airlock-base:$BASE_TAG-noto-$(sha256sum <<<"$fonts" | cut -c1-8)"
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    say "building the base image $base with mmdebstrap (Debian bookworm, no registry; a few minutes once)"
    # Everything under /usr/share/fonts excluded, then each catalogue file and the folders
    # holding it included again (dpkg creates no folder it was told to leave out).
    local keep=(--dpkgopt='path-exclude=/usr/share/fonts/*') font
    while read -r font; do
      while [ "$font" != /usr/share/fonts ]; do keep+=(--dpkgopt="path-include=$font"); font=${font%/*}; done
    done <<<"$fonts"
    mmdebstrap --quiet --variant=minbase --include="$packages" "${keep[@]}" bookworm "$STATE/base.tar"
    docker import "$STATE/base.tar" "$base" >/dev/null
    rm -f "$STATE/base.tar"
  fi
  rm -rf wheels
  say "building the wheels the image installs (on the host: the image build has no network)"
  "$PYTHON" -m pip wheel -q --disable-pip-version-check -c constraints.txt -w wheels . >&2
  say "building the image pdf-airlock (Dockerfile)"
  docker build -q --build-arg BASE="$base" -t pdf-airlock . >/dev/null
  docker image inspect pdf-airlock --format '{{.Size}}'
}

stop() {
  if [ -f "$STATE/dockerd.pid" ]; then
    pid=$(cat "$STATE/dockerd.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  # dockerd leaves mounts behind (its data root, a network namespace under exec/netns): unmount
  # every one under $STATE, deepest first, before removing it.
  awk -v state="$STATE" '$2 == state || index($2, state "/") == 1 {print $2}' /proc/self/mounts |
    sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  rm -rf "$STATE" || echo "could not remove $STATE entirely; remove it by hand" >&2
}

"$@"
