#!/usr/bin/env bash
# The whole test suite (run by `make test` after the linters).
#
# When a Docker engine can be set up here (root, with docker.io and mmdebstrap installable),
# this builds the image and runs the container tests too (tests/container/test_container.py) against a
# private dockerd that it stops afterwards. PDF_AIRLOCK_REQUIRE_DOCKER=1 (set by .ci/run) makes
# a failure to set Docker up an error instead of a skip.
set -euo pipefail
cd "$(dirname "$0")/.."

docker_possible() {
  [ "$(id -u)" = 0 ] && { command -v dockerd >/dev/null || command -v apt-get >/dev/null; }
}

say() { echo "== $*" >&2; }

# OCR's language data and fonts (Debian packages, read by pdf_airlock.worker.pdf.ocr): the tests
# need English, orientation and script detection (osd), German, Arabic and Simplified Chinese
# (tests/tools/test_ocr*.py), and WenQuanYi Micro Hei to typeset their Chinese page (DejaVu, for the
# others, comes with Debian). Installed here when missing and this runs as root with apt-get.
TESSDATA=/usr/share/tesseract-ocr/5/tessdata
OCR_PACKAGES=()
for lang in eng osd deu ara chi_sim; do
  [ -f "$TESSDATA/$lang.traineddata" ] || OCR_PACKAGES+=("tesseract-ocr-${lang//_/-}")
done
[ -f /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || OCR_PACKAGES+=(fonts-wqy-microhei)
if [ "${#OCR_PACKAGES[@]}" -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing ${OCR_PACKAGES[*]} (OCR language data, a test font) from Debian (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${OCR_PACKAGES[@]}" >/dev/null
fi

# The fallback fonts for text in fonts a document does not embed (pdf_airlock.worker.fonts: the
# catalogue's files and Debian packages): tests/sandbox/test_fonts.py needs them and skips without.
# Installed here when a file is missing and this runs as root with apt-get.
missing_fonts=$(.venv/bin/python -m pdf_airlock.worker.fonts.catalogue paths | while read -r font; do
  [ -f "$font" ] || echo "$font"
done)
if [ -n "$missing_fonts" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  mapfile -t font_packages < <(.venv/bin/python -m pdf_airlock.worker.fonts.catalogue packages)
  say "installing ${font_packages[*]} (fallback fonts) from Debian (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${font_packages[@]}" >/dev/null
elif [ -n "$missing_fonts" ]; then
  say "fallback fonts missing and not root: tests/sandbox/test_fonts.py will be skipped"
fi

if [ "${PDF_AIRLOCK_DOCKER:-}" != "0" ] && docker_possible; then
  say "container tests: installing Docker if needed, starting a private dockerd, building the image (minutes on a first run; \`make check\` skips them)"
  if scripts/container.sh setup && scripts/container.sh start && size=$(scripts/container.sh build); then
    trap 'scripts/container.sh stop' EXIT
    export PDF_AIRLOCK_DOCKER=1
    export DOCKER_HOST="unix://${PDF_AIRLOCK_DOCKER_STATE:-/tmp/pdf-airlock-docker}/docker.sock"
    echo "container image built: $((size / 1000000)) MB" >&2
  elif [ "${PDF_AIRLOCK_REQUIRE_DOCKER:-}" = 1 ]; then
    echo "Docker could not be set up, and PDF_AIRLOCK_REQUIRE_DOCKER=1" >&2
    exit 1
  else
    echo "Docker could not be set up: the container tests will be skipped" >&2
  fi
elif [ "${PDF_AIRLOCK_REQUIRE_DOCKER:-}" = 1 ]; then
  echo "Docker is required (PDF_AIRLOCK_REQUIRE_DOCKER=1) but cannot be set up here" >&2
  exit 1
fi

say "running the test suite"
.venv/bin/pytest "$@"
