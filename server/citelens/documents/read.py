"""Reading documents from disk: a file's text.

The one place that decides how the bytes of a file CiteLens reads (its kind, by suffix:
``core/dockind.py``) become text, for the editor and the CLI: UTF-8 (a BOM dropped); bytes
that are not UTF-8 in
the encoding the user set (``fileEncoding``), or one read with confidence (a LaTeX
``inputenc`` declaration, else ISO 8859-1 when no byte is a C1 control); otherwise the text
is read as ISO 8859-1 for the checks, and marked uncertain so no edit is computed on it
(:func:`decode`). Decoding never replaces a byte: every edit is made on the text an editor
reading the file in its encoding shows.
"""

from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

#: A file larger than this is not read (the biggest real bibliography seen: 50 MB).
MAX_FILE_BYTES = 256 << 20
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)


def read_text(path: str | Path) -> str:
    """A file's text (:func:`decode`), BOM stripped; ``""`` if unreadable."""
    text, _why = read_file(path)
    return text or ""


@dataclass(frozen=True, slots=True)
class Decoded:
    """A file's text and how it was read from its bytes."""

    text: str
    encoding: str  # the codec's name: "utf-8", "iso8859-1", "cp1252", ...
    #: why the encoding is a guess (then no edit is computed on this text), or None
    uncertain: str | None = None


#: ``\usepackage[latin1]{inputenc}``: the encoding a LaTeX file declares for itself.
_INPUTENC = re.compile(rb"\\usepackage\s*\[([^\]]{1,200})\]\s*\{inputenc\}")
_INPUTENC_NAMES = {
    b"latin1": "iso8859-1",
    b"latin9": "iso8859-15",
    b"ansinew": "cp1252",
    b"cp1252": "cp1252",
    b"latin2": "iso8859-2",
    b"cp1250": "cp1250",
    b"koi8-r": "koi8-r",
    b"cp1251": "cp1251",
}
_C1 = re.compile(rb"[\x80-\x9f]")
#: A multi-byte UTF-8 character: in a file that is not UTF-8, a sign it is partly UTF-8.
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def codec_name(name: str | None) -> str | None:
    """The canonical codec name of ``name`` (``latin-1`` -> ``iso8859-1``), None if unknown."""
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def decode(data: bytes, declared: str | None = None) -> Decoded:
    """The text of a file's bytes, never lossy. UTF-8 first (a BOM dropped); bytes that are
    not UTF-8 are read in ``declared`` (the ``fileEncoding`` setting), else in the encoding
    the file declares (``inputenc``), else as ISO 8859-1 when no byte is a C1 control
    (0x80-0x9F: Windows-1252's quotes and dashes, never in Latin-1 text) and none of it
    reads as UTF-8. Anything else is uncertain, read for the checks only (and never
    edited): as UTF-8 with replacement when parts of it are UTF-8, else as ISO 8859-1."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as exc:
        not_utf8 = f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    for name in (codec_name(declared), _declared_by_latex(data)):
        if name is None:
            continue
        try:
            return Decoded(data.decode(name), name)
        except UnicodeDecodeError:
            return Decoded(
                data.decode("iso8859-1"), "iso8859-1", f"its encoding is uncertain: {not_utf8} nor {name}"
            )
    if _C1.search(data) is not None:
        return Decoded(
            data.decode("iso8859-1"),
            "iso8859-1",
            f"its encoding is uncertain: {not_utf8}, Latin-1 or Windows-1252? Set citelens.fileEncoding",
        )
    if _UTF8_SEQUENCE.search(data) is not None:  # partly UTF-8: a mixed or damaged file
        return Decoded(
            data.decode("utf-8", errors="replace"),
            "utf-8",
            f"its encoding is uncertain: {not_utf8}, though parts of it are (a mixed or damaged "
            "file). Set citelens.fileEncoding",
        )
    return Decoded(data.decode("iso8859-1"), "iso8859-1")


def _declared_by_latex(data: bytes) -> str | None:
    m = _INPUTENC.search(data, 0, 1 << 16)
    if m is None:
        return None
    for option in m.group(1).split(b","):
        name = _INPUTENC_NAMES.get(option.strip().lower())
        if name is not None:
            return name
    return None


def can_write(text: str, encoding: str) -> bool:
    """``text`` can be written to a file in ``encoding`` (no character would be lost)."""
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def not_regular(path: str | Path) -> str | None:
    """Why ``path`` is not a file CiteLens reads (a FIFO, a device, too big), or None.
    Follows symlinks: a ``.tex`` linked to ``/dev/zero`` is a device."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # missing: not a skipped file
    return _why_not(st)


def _why_not(st: os.stat_result) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(st.st_mode)
            else "a device"
            if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
            else "a socket"
            if stat.S_ISSOCK(st.st_mode)
            else "a folder"
            if stat.S_ISDIR(st.st_mode)
            else "not a file"
        )
        return f"not a regular file ({kind})"
    if st.st_size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES >> 20} MB ({st.st_size >> 20} MB)"
    return None


def read_file(path: str | Path, declared: str | None = None) -> tuple[str | None, str | None]:
    """The text of :func:`read_decoded` and why it is not read, if it is not."""
    decoded, why = read_decoded(path, declared)
    return (None if decoded is None else decoded.text), why


def read_decoded(path: str | Path, declared: str | None = None) -> tuple[Decoded | None, str | None]:
    """``(decoded, None)``; ``(None, why)`` for a file that is not read; ``("", why)`` for one
    that could not be read (no permission). Only regular files are read,
    at most :data:`MAX_FILE_BYTES`: a symlink to ``/dev/zero`` or ``/dev/stdin`` (the
    server's own input) or a FIFO would never end or fill the memory. The file is opened
    non-blocking and checked again once open (it may have been swapped)."""
    why = not_regular(path)
    if why is not None:
        return None, why
    try:
        fd = os.open(path, _READ_FLAGS)
    except (OSError, ValueError) as exc:
        return Decoded("", "utf-8"), f"cannot read it ({getattr(exc, 'strerror', None) or exc})"
    try:
        why = _why_not(os.fstat(fd))
        if why is not None:
            return None, why
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:
            return None, f"larger than {MAX_FILE_BYTES >> 20} MB"
    except OSError as exc:
        return Decoded("", "utf-8"), f"cannot read it ({exc.strerror or exc})"
    finally:
        os.close(fd)
    return decode(b"".join(chunks), declared), None
