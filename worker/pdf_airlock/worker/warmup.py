"""Warm-up run in the zygote before it accepts jobs.

Imports every parser library and runs each engine once over a tiny document built here, so the
modules, codecs and lazily-loaded tables a parse needs are already in memory when a job child
is forked. The child inherits them and never has to open a file.
"""

from __future__ import annotations

import io
from typing import Final, Literal

from pdf_airlock.worker.pdf.sample import SAMPLE_PASSWORD, SAMPLE_TEXT, tiny_document, tiny_pdf

__all__ = ["warm_up"]


# Codecs the engines name in code (pdfminer's ToUnicode and text-string decoding, pikepdf's and
# pypdfium2's bindings). Python imports a codec's module on first lookup, which a job child cannot.
_CODECS: Final = (
    "ascii",
    "latin-1",
    "utf-8",
    "utf-8-sig",
    "utf-16",
    "utf-16-be",
    "utf-16-le",
    "utf-32",
    "utf-32-be",
    "utf-32-le",
    "cp1252",
    "mac_roman",
    "charmap",
    "unicode_escape",
    "raw_unicode_escape",
)


def _no_external_decoders() -> None:
    """pikepdf decodes JBIG2 by running the ``jbig2dec`` program (qpdf asks it to when a content
    stream is JBIG2-encoded): a job child may run no program (seccomp kills it for trying), so
    the decoder is one that refuses at once, in the zygote and every child."""
    import pikepdf.jbig2

    class _Refused(pikepdf.jbig2.JBIG2DecoderInterface):
        def check_available(self) -> None:
            raise pikepdf.DependencyError("JBIG2 decoding by an external program is off in the sandbox")

        def decode_jbig2(self, jbig2: bytes, jbig2_globals: bytes) -> bytes:
            raise pikepdf.DependencyError("JBIG2 decoding by an external program is off in the sandbox")

    pikepdf.jbig2.set_decoder(_Refused())


def _warm_codecs() -> None:
    import codecs

    for name in _CODECS:
        codecs.lookup(name)


def warm_up() -> None:
    """Import and exercise every engine; raises if an engine does not work at all. First the
    fallback fonts, before anything renders; then each tool's parser warms itself up on the
    sample document (its ``warm_up``); then what every parser shares: codecs, CMaps,
    decryption."""
    from pdf_airlock.worker import cmaps
    from pdf_airlock.worker.parsers import parser_modules
    from pdf_airlock.worker.pdf import visibility

    _warm_fonts()
    _warm_codecs()
    _no_external_decoders()
    cmaps.preload()
    sample = tiny_pdf()
    _warm_ocr(sample)
    visibility.warm_up()
    for module in parser_modules():
        module.warm_up(sample)
    _warm_crypto()
    _warm_decrypt()


def _warm_fonts() -> None:
    """PDFium's system fonts from the zygote's memory (``pdf_airlock.worker.fonts``), and one
    page drawn with them, so that PDFium has listed the faces before any fork."""
    from pdf_airlock.worker import fonts
    from pdf_airlock.worker.fonts import check

    fonts.install()
    check.warm_up()


def _warm_ocr(sample: bytes) -> None:
    """Load Tesseract and its language data (``pdf_airlock.worker.pdf.ocr``) and read the
    sample page with it, before any parser's warm-up uses OCR."""
    import pypdfium2 as pdfium

    from pdf_airlock.worker.pdf import ocr

    document = pdfium.PdfDocument(sample)
    try:
        page = document[0]
        try:
            ocr.warm_up(page, SAMPLE_TEXT)
        finally:
            page.close()
    finally:
        document.close()


def _warm_crypto() -> None:
    """qpdf's crypto provider initialises itself (and may read its config) on first use, which
    a sandboxed child cannot do: decrypt once per supported handler here, with every engine."""
    import pikepdf

    from pdf_airlock.worker.parsers import info, read

    handlers: tuple[tuple[Literal[2, 3, 4, 5, 6], bool], ...] = (
        (6, True),
        (4, True),
        (4, False),
        (3, False),
        (2, False),
    )
    for revision, aes in handlers:
        data = tiny_pdf(
            pikepdf.Encryption(user=SAMPLE_PASSWORD, owner=SAMPLE_PASSWORD, R=revision, aes=aes, metadata=aes)
        )
        args = {"password": SAMPLE_PASSWORD, "max_chars": 1000}
        info.run(data, args)
        read.run(data, args)
        read.run(data, args | {"engine": "layout"})


_TRAILER_STAND_IN: Final = b"/NoCrypt"  # as long as b"/Encrypt": offsets stay valid when swapped
# A parser that opens encrypted documents through ``pdf_airlock.worker.pdf.decrypt`` declares the
# job arguments of its decrypting warm-up as ``DECRYPT_WARM_ARGS``.
_DECRYPT_WARM_NAME: Final = "DECRYPT_WARM_ARGS"


def _qpdf_only_sample() -> bytes:
    """AES-256 with an empty owner password: qpdf opens it without a password, PDFium does not."""
    import pikepdf

    out = io.BytesIO()
    tiny_document().save(out, encryption=pikepdf.Encryption(user=SAMPLE_PASSWORD, owner="", R=6))
    return out.getvalue()


def _locked_sample() -> bytes:
    """Embedded files alone encrypted (AES-128: cheaper to check than AES-256's hash, and the
    path is the same). qpdf writes no /Encrypt into a plain file, so the dictionary goes in
    under a stand-in key swapped afterwards; no password opens it (only the placeholder key)."""
    import pikepdf

    pdf = tiny_document()
    encrypt = pikepdf.Dictionary(
        Filter=pikepdf.Name.Standard,
        V=4,
        R=4,
        Length=128,
        P=-4,
        O=pikepdf.String(bytes(32)),
        U=pikepdf.String(bytes(32)),
        CF=pikepdf.Dictionary(StdCF=pikepdf.Dictionary(CFM=pikepdf.Name.AESV2, Length=16)),
        StmF=pikepdf.Name.Identity,
        StrF=pikepdf.Name.Identity,
        EFF=pikepdf.Name.StdCF,
    )
    pdf.trailer[_TRAILER_STAND_IN.decode()] = pdf.make_indirect(encrypt)
    out = io.BytesIO()
    pdf.save(out, static_id=True)
    return out.getvalue().replace(_TRAILER_STAND_IN, b"/Encrypt")


def _warm_decrypt() -> None:
    """``pdf_airlock.worker.pdf.decrypt``: open a document only qpdf opens, and one whose embedded files
    alone are encrypted (with no password and a wrong one), through each path of that module and of
    ``common``'s callers, so a job child finds them loaded."""
    from pdf_airlock.worker.parsers import parser_modules, read
    from pdf_airlock.worker.pdf.opening import open_document

    # A qpdf-only document differs from any other only in how PDFium gets it: one read does.
    answer = read.run(_qpdf_only_sample(), read.DECRYPT_WARM_ARGS)
    if SAMPLE_TEXT not in answer["pages"][0]["text"]:
        raise RuntimeError("reading a decrypted copy failed its warm-up")
    locked = _locked_sample()
    decrypting = [module for module in parser_modules() if hasattr(module, _DECRYPT_WARM_NAME)]
    for password in (None, "x"):
        for module in decrypting:
            module.run(locked, getattr(module, _DECRYPT_WARM_NAME) | {"password": password})
        opened = open_document(locked, password)
        opened.layout_input()
        opened.document.close()
