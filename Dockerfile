# pdf-airlock container image.
#
# Built from a locally made Debian bookworm base (no registry is needed) and wheels prepared on
# the host: `scripts/container.sh build` does both, and passes the base it made as BASE. BASE can
# be any bookworm image with python3, python3-venv, tini, the tesseract-ocr-<lang> packages of
# OCR_LANGUAGES in scripts/container.sh, fonts-noto-core and fonts-noto-cjk (e.g.
# docker.io/library/debian:bookworm plus those packages); the script's base keeps only the font
# files the server uses (pdf_airlock.worker.fonts.catalogue).
#
#   docker run -i --rm --network none --read-only --cap-drop ALL \
#     --security-opt no-new-privileges --security-opt seccomp=seccomp/profile.json \
#     -v "$PWD:/data:ro" pdf-airlock
ARG BASE

FROM ${BASE} AS build
COPY wheels/ /wheels/
RUN python3 -m venv /opt/airlock \
    && /opt/airlock/bin/python -m pip install --no-index --no-cache-dir --find-links /wheels pdf-airlock \
    && /opt/airlock/bin/python -m pip uninstall -y pip \
    && /opt/airlock/bin/python -m compileall -q /opt/airlock

FROM ${BASE}
# No package manager or compiler in the runtime image: remove apt and dpkg's front ends.
RUN rm -rf /usr/bin/apt* /usr/bin/dpkg* /usr/lib/apt /var/lib/apt /var/cache/apt /etc/apt \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin airlock \
    && mkdir /data
COPY --from=build /opt/airlock /opt/airlock
ENV PATH=/opt/airlock/bin:/usr/bin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    LANG=C.UTF-8
USER 10001:10001
WORKDIR /data
# tini as PID 1 reaps the processes orphaned to it: when a zygote dies, its pre-forked children
# die with it (their parent-death signal) and are re-parented to PID 1, which the server would
# never wait for. It passes stdin, stdout and stderr through and forwards signals to the server.
# The server runs in isolated mode (-I): the served folder is the working directory, and neither
# it nor a PYTHON* variable given with `docker run -e` can put code on sys.path.
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/airlock/bin/python", "-I", "-m", "pdf_airlock.server"]
CMD ["serve", "--root", "/data"]
