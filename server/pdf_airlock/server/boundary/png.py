"""Checking a PNG produced by a job child before it is handed to a client.

The child is untrusted, so its PNG is checked as data: valid base64, the PNG signature, an IHDR
chunk first whose dimensions are the ones the child declared and within the pixel budget. The
image is not decoded here (the supervisor loads no image codec).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
import zlib
from typing import Final

from pdf_airlock.server.errors import ToolError

__all__ = ["checked_png"]

_SIGNATURE: Final = b"\x89PNG\r\n\x1a\n"
_IHDR_END: Final = 33


def checked_png(data_base64: str, width: int, height: int, max_pixels: int) -> tuple[bytes, str]:
    """The PNG's bytes and sha256, or ``crashed`` if the child's image is not what it claims."""
    try:
        png = base64.b64decode(data_base64, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError("crashed", "the job child returned an image that is not base64") from exc
    if len(png) < _IHDR_END or not png.startswith(_SIGNATURE) or png[12:16] != b"IHDR":
        raise ToolError("crashed", "the job child returned an image that is not a PNG")
    (length,) = struct.unpack(">I", png[8:12])
    ihdr_width, ihdr_height = struct.unpack(">II", png[16:24])
    (crc,) = struct.unpack(">I", png[29:33])
    if length != 13 or crc != zlib.crc32(png[12:29]):
        raise ToolError("crashed", "the job child returned a PNG with a damaged header")
    if (ihdr_width, ihdr_height) != (width, height) or width * height > max_pixels:
        raise ToolError("crashed", "the job child returned a PNG whose size is not the one it declared")
    return png, hashlib.sha256(png).hexdigest()
