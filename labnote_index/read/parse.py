"""Read one file's bytes into a JSON object, strictly, without ever failing loudly.

JSON as Python's ``json`` module reads it is more forgiving than the format
allows (NaN, duplicate keys, a byte order mark), so each of those is caught
here and reported as a problem naming what is wrong. A problem is either fatal
(nothing could be read, ``ParsedFile.error``) or a warning about a file that
was still read (``ParsedFile.problems``).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from ..format.problem import Problem
from .paths import storable_inode

try:  # a speed-up only: every answer is the same without it
    import orjson
except ImportError:  # pragma: no cover - installed with the package
    orjson = None  # type: ignore[assignment]

# Records are a few kilobytes; anything this large is not a record and is not
# read into memory (it is still hashed, in chunks, so the file is accounted for).
MAX_RECORD_BYTES = 4 * 1024 * 1024

# A Markdown file or view larger than this is hashed only: its links are not read.
MAX_TEXT = 64 * 1024 * 1024

UTF8_BOM = b"\xef\xbb\xbf"

# Records are a few levels deep. Deeper values are refused at the read, so that
# nothing after it (validation, rows, views, JSON output) walks an untrusted
# structure deep enough to exhaust the stack.
MAX_JSON_DEPTH = 64

# SQLite integers are 64-bit; JSON numbers are not.
SQLITE_INTEGERS = range(-(2**63), 2**63)
# A \uD800-\uDFFF escape: the only way a lone surrogate (text that is not
# Unicode, which SQLite cannot store) gets into a parsed value.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class ParsedFile:
    """One record file read: its size and hash, and its data, or the error."""

    size: int
    sha256: str
    st: os.stat_result  # the opened file's fstat (paths.as_read)
    data: dict[str, Any] | None = None
    text: str | None = None  # the decoded JSON text, for a file that parsed
    error: str | None = None
    # problems that did not stop the read
    problems: list[Problem] = field(default_factory=list)


class _Digits(str):
    """An integer too big for SQLite, kept as its digits (and so told from a string)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (JSON has no NaN or Infinity)")


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, a device, a socket, a directory)."""


def open_regular(path: Path | str, follow: bool = True) -> tuple[int, os.stat_result]:
    """A read-only descriptor of a regular file, and its stat.

    Opened without blocking (a FIFO put in a file's place must not hang the
    build) and checked after opening, so what is read is what was checked.
    ``follow=False``: a symlink in the file's place is refused (ELOOP), not read.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(path: Path | str) -> bytes:
    """The bytes of a regular file, never read through a symlink in its place."""
    fd, _ = open_regular(path, follow=False)
    with os.fdopen(fd, "rb") as file:
        return file.read()


class HardLinked(OSError):
    """A file with a second name, which may be a file outside the repository (a
    hard link is not a symlink, and no path tells): its content is never taken in."""


class NotTheFileSeen(OSError):
    """A path that, opened, is another file than the one looked at before (its
    inode differs): replaced since, or reached through a directory that was."""


# The error of a file that was another when read than when looked at: the
# next build reads it again (index/changed.py).
CHANGED_AS_READ = (
    "file changed as it was read (a symlink or another file took its place, or a "
    "directory on its way became a symlink): it was not read; build again"
)


def read_error(exc: OSError) -> str:
    """Why a file listed a moment ago could not be read, and what to do."""
    if isinstance(exc, HardLinked):
        return (
            f"a hard link ({exc.strerror}): its content may be a file outside the "
            "repository, so it was not read; replace it with a copy of its own"
        )
    if isinstance(exc, FileNotFoundError):
        return (
            "file is missing: it was listed, then renamed or deleted before it could be "
            "read; build again once the repository is still"
        )
    if isinstance(exc, PermissionError):
        return "file cannot be read (permission denied): make it readable, then build again"
    if isinstance(exc, NotRegularFile):
        return "not a regular file (a FIFO, device or socket): replace it with a file"
    if isinstance(exc, NotTheFileSeen):
        return CHANGED_AS_READ
    return f"file cannot be read ({exc.strerror or exc}): check the file, then build again"


class Hashed(NamedTuple):
    """A file hashed: size, SHA-256, its bytes when kept, its hard-link count,
    and the opened file's fstat (its times: paths.as_read)."""

    size: int
    sha256: str
    content: bytes | None  # the bytes, when kept
    links: int  # hard links to the file: more than one may be a file outside
    st: os.stat_result


def universal_newlines(raw: bytes) -> bytes:
    """Text as a reader with newline translation sees it (the upstream generator's
    check reads views so): CRLF and a lone CR are newlines. A Windows checkout
    of a current view is current."""
    return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if b"\r" in raw else raw


def same_file(full: Path | str, key: Any, stored: tuple[Any, ...], sha256: str | None) -> bool:
    """Whether a file, as ``key`` (a paths.FileStat) finds it now, is what a stored
    row of (size, mtime_ns, ctime_ns, inode) and ``sha256`` describes. A row
    whose change time was not kept (the file changed too close to being read to
    tell) is settled by its content, as git settles a racily clean entry."""
    size, mtime_ns, ctime_ns, inode = stored
    if (key.size, key.mtime_ns, key.inode) != (size, mtime_ns, inode):
        return False
    if ctime_ns is not None:
        return bool(key.ctime_ns == ctime_ns)
    try:
        return sha256 is not None and hash_file(full).sha256 == sha256
    except OSError:
        return False


def _at_end(read: int, asked: int, total: int, st: os.stat_result) -> bool:
    """Whether a read that gave ``read`` bytes of the ``asked`` has reached the end
    of the file: it came short, exactly at the size its fstat gave. The read of
    nothing that would confirm it is a system call a file (93,000 at the
    benchmark's size); a short read anywhere else (a signal, a file grown or cut
    since its fstat) is read on as before."""
    return read < asked and total == st.st_size


def _open_seen(path: Path | str, follow: bool) -> tuple[int, os.stat_result]:
    """``open_regular``, with ``follow=False`` a symlink in the file's place
    raising NotTheFileSeen (the file looked at is not there)."""
    try:
        return open_regular(path, follow)
    except OSError as exc:
        if not follow and exc.errno == errno.ELOOP:
            raise NotTheFileSeen(errno.ELOOP, "a symlink where a file was", str(path)) from exc
        raise


def hash_file(
    path: Path | str, keep_up_to: int = 0, follow: bool = True, inode: int | None = None
) -> Hashed:
    """Size and sha256 of a regular file, read in chunks; its content too when it is
    no bigger than ``keep_up_to`` bytes (otherwise None). Raises OSError
    (NotRegularFile for anything but a regular file; NotTheFileSeen, with
    ``follow=False`` for a symlink in its place, and when ``inode``, the
    storable inode number it was seen with, is not the opened file's)."""
    digest = hashlib.sha256()
    size = 0
    kept: list[bytes] | None = [] if keep_up_to else None
    fd, st = _open_seen(path, follow)
    if inode is not None and storable_inode(st.st_ino) != inode:
        os.close(fd)
        raise NotTheFileSeen(errno.ESTALE, "not the file the walk saw", str(path))
    try:
        # os.read straight from the descriptor: a file object per file costs more
        # than reading a small file does. The first read asks for all of it.
        want = min(st.st_size + 1, 1 << 20)
        while chunk := os.read(fd, want):
            digest.update(chunk)
            size += len(chunk)
            if kept is not None and size <= keep_up_to:
                kept.append(chunk)
            else:
                kept = None
            if _at_end(len(chunk), want, size, st):
                break
            want = 1 << 20
    finally:
        os.close(fd)
    content = b"".join(kept) if kept is not None else None
    return Hashed(size, digest.hexdigest(), content, st.st_nlink, st)


# orjson reads an integer beyond 64 bits as a float: a number this large, of
# either kind, is left to the strict parser, which keeps such integers exactly.
_LARGE = 2.0**63
# A key written with space before its colon: the count of keys below misses it.
_SPACED_KEY = re.compile(r'"[ \t\r\n]+:')


def _plain_object(raw: bytes, text: str) -> dict[str, Any] | None:
    """The object ``text`` holds when no strict check can apply to it, parsed by
    orjson (much faster than ``json`` with the hooks the checks need);
    None when the strict parser must look.

    Without a backslash every quote delimits a string, so each key is the one
    place a quote is followed by a colon: with one object only, and no space
    before a colon, as many of those as the object has keys means no key
    appeared twice. NaN, Infinity, a byte order mark and bad UTF-8 make orjson
    fail, and so go to the strict parser too, as does any number too large for
    SQLite."""
    if orjson is None or "\\" in text or text.count("{") != 1 or _SPACED_KEY.search(text):
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or text.count('":') != len(value) or _large_number(value):
        return None
    return value


def _large_number(value: dict[str, Any]) -> bool:
    """Whether an object (of scalars and arrays) holds a number SQLite's 64-bit
    integers cannot hold, at any depth (without recursion)."""
    pending = [value.values()]
    while pending:
        for item in pending.pop():
            kind = type(item)
            if kind is list:
                pending.append(item)
            elif (kind is int and item not in SQLITE_INTEGERS) or (
                kind is float and abs(item) >= _LARGE
            ):
                return True
    return False


def parse_json_bytes(raw: bytes, fast: bool = True) -> tuple[Any, str | None, list[Problem], str]:
    """Decode raw bytes as one strict JSON value (``fast``: through orjson when
    that gives the same answer, see ``_plain_object``).

    Returns (value, fatal_error, problems, decoded text).
    """
    problems: list[Problem] = []
    if raw.startswith(UTF8_BOM):
        problems.append(
            Problem(
                "", "encoding_bom", "file starts with a UTF-8 byte order mark; save it without one"
            )
        )
        raw = raw[len(UTF8_BOM) :]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start}): save the file as UTF-8", problems, ""
    if not text.strip():
        return None, "file is empty: a record is one JSON object", problems, text
    plain = _plain_object(raw, text) if fast else None
    if plain is not None:
        return plain, None, problems, text

    duplicates: list[str] = []
    too_big: list[str] = []

    def parse_int(digits: str) -> int | str:
        number = int(digits)
        if number in SQLITE_INTEGERS:
            return number
        too_big.append(digits)
        return _Digits(digits)  # kept as text: no 64-bit column can hold it

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                duplicates.append(key)
            obj[key] = value
        return obj

    try:
        value = json.loads(
            text,
            object_pairs_hook=pairs_hook,
            parse_constant=_reject_constant,
            parse_int=parse_int,
        )
    except json.JSONDecodeError as exc:
        error = f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        return None, error, problems, text
    except RecursionError:
        return None, _too_deep_error(), problems, text
    except ValueError as exc:
        return None, f"malformed JSON: {exc}", problems, text
    # More brackets than the cap is the cheap sign that the value may be too deep.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _depth_over(value, MAX_JSON_DEPTH):
        return None, _too_deep_error(), problems, text
    if _may_hold_surrogates(text):  # first, so that no field name below holds one
        value, fields = _replace_surrogates(value)
        duplicates = [_SURROGATE.sub("\ufffd", key) for key in duplicates]
        for key in fields:
            problems.append(
                Problem(
                    key,
                    "lone_surrogate",
                    "text here holds an unpaired UTF-16 surrogate escape (\\uD800-\\uDFFF), "
                    "which is not Unicode; it was indexed as U+FFFD",
                )
            )
    for key in dict.fromkeys(duplicates):
        problems.append(
            Problem(
                key,
                "duplicate_key",
                f"key {key!r} appears more than once in one object; the last value was indexed",
            )
        )
    for key in _fields_holding(value, lambda v: isinstance(v, _Digits)) if too_big else ():
        problems.append(
            Problem(
                key,
                "number_out_of_range",
                "an integer here does not fit in SQLite's 64-bit integers: its column "
                "holds it as text, or rounded in a numeric column; record_json holds it exactly",
            )
        )
    return value, None, problems, text


def _too_deep_error() -> str:
    return (
        f"JSON nested more than {MAX_JSON_DEPTH} levels deep: "
        "a record is a flat object; it was not read"
    )


def _depth_over(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` deep (without recursion)."""
    if not isinstance(value, dict | list):
        return False
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > limit:
                    return True
                stack.append((child, depth + 1))
    return False


def _fields_holding(value: Any, match: Callable[[Any], bool]) -> list[str]:
    """The top-level keys of an object whose value holds, at any depth, a string that
    matches ("" for the top level itself)."""

    def holds(item: Any) -> bool:
        if isinstance(item, dict):
            return any(holds(k) or holds(v) for k, v in item.items())
        if isinstance(item, list):
            return any(holds(v) for v in item)
        return isinstance(item, str) and match(item)

    if not isinstance(value, dict):
        return [""] if holds(value) else []
    return [key for key, item in value.items() if holds(key) or holds(item)]


def _may_hold_surrogates(text: str) -> bool:
    return "\\u" in text and _SURROGATE_ESCAPE.search(text) is not None


def without_surrogates(value: Any, text: str) -> Any:
    """``value``, parsed from ``text``, with lone surrogates replaced by U+FFFD
    (neither SQLite nor a UTF-8 file can hold them), as the index reads it."""
    return _replace_surrogates(value)[0] if _may_hold_surrogates(text) else value


def _replace_surrogates(value: Any) -> tuple[Any, list[str]]:
    """The value with every lone surrogate replaced by U+FFFD, and where there were some."""
    fields = _fields_holding(value, lambda v: _SURROGATE.search(v) is not None)

    def clean(item: Any) -> Any:
        if isinstance(item, dict):
            return {clean(k): clean(v) for k, v in item.items()}
        if isinstance(item, list):
            return [clean(v) for v in item]
        if isinstance(item, str) and _SURROGATE.search(item):
            return _SURROGATE.sub("\ufffd", item)
        return item  # as it is (a _Digits stays one)

    return (clean(value) if fields else value), [_SURROGATE.sub("\ufffd", f) for f in fields]


def read_record_file(path: Path | str, follow: bool = True) -> ParsedFile:
    """Read a file that should hold one JSON object. Never raises for bad content;
    raises OSError when the file cannot be read (see ``read_error``; with
    ``follow=False``, NotTheFileSeen for a symlink in its place)."""
    fd, st = _open_seen(path, follow)
    if st.st_nlink > 1:
        os.close(fd)
        raise HardLinked(errno.EMLINK, f"{st.st_nlink} names", str(path))
    try:
        # At most one byte over the limit is read: a file that grew since its
        # stat is still never read whole into memory.
        parts, got, want = [], 0, min(st.st_size + 1, MAX_RECORD_BYTES + 1)
        while got <= MAX_RECORD_BYTES and (chunk := os.read(fd, want)):
            parts.append(chunk)
            got += len(chunk)
            if _at_end(len(chunk), want, got, st):
                break
            want = MAX_RECORD_BYTES + 1 - got
    finally:
        os.close(fd)
    if got > MAX_RECORD_BYTES:
        hashed = hash_file(path, follow=follow)  # in chunks, never whole in memory
        return ParsedFile(
            size=hashed.size,
            sha256=hashed.sha256,
            error=f"file is {hashed.size} bytes, over the {MAX_RECORD_BYTES} byte limit for a "
            "record; it was not read",
            st=hashed.st,
        )
    raw = parts[0] if len(parts) == 1 else b"".join(parts)
    parsed = ParsedFile(size=len(raw), sha256=hashlib.sha256(raw).hexdigest(), st=st)
    value, error, problems, text = parse_json_bytes(raw)
    parsed.problems = problems
    if error:
        parsed.error = error
    elif not isinstance(value, dict):
        kind = _json_kind(value)
        parsed.error = f"top-level JSON value is {kind}, not an object: a record is one JSON object"
    else:
        parsed.data = value
        parsed.text = text
    return parsed


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


class Member(NamedTuple):
    """One member of a JSON object as written: its key, and where the key's string
    token and the value's text begin and end (character offsets)."""

    key: str
    key_start: int
    key_end: int
    value_start: int
    value_end: int


_JSON_SPACE = " \t\n\r"


def top_level_members(text: str) -> list[Member] | None:
    """The members of the one JSON object ``text`` is, in the order written (a key
    written twice is listed twice); None when it is not one object. Nested values
    are skipped in one pass, without recursion: only where they end is wanted."""
    try:
        i = _skip_space(text, 0)
        if text[i : i + 1] != "{":
            return None
        members: list[Member] = []
        i = _skip_space(text, i + 1)
        while text[i : i + 1] != "}":
            if text[i : i + 1] != '"':
                return None
            key, key_end = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            colon = _skip_space(text, key_end)
            if text[colon : colon + 1] != ":":
                return None
            start = _skip_space(text, colon + 1)
            end = _value_end(text, start)
            members.append(Member(key, i, key_end, start, end))
            i = _skip_space(text, end)
            if text[i : i + 1] == ",":
                i = _skip_space(text, i + 1)
            elif text[i : i + 1] != "}":
                return None
        return members if _skip_space(text, i + 1) == len(text) else None
    except (ValueError, IndexError):
        return None


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in _JSON_SPACE:
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    """Where the JSON value written from ``i`` ends (depth counted, strings scanned)."""
    depth = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = json.decoder.scanstring(text, i + 1)[1]  # type: ignore[attr-defined]
        elif c in "[{":
            depth, i = depth + 1, i + 1
        elif c in "]}":
            depth, i = depth - 1, i + 1
        elif c in ",:" or c in _JSON_SPACE:
            if depth == 0:
                raise ValueError("no value here")
            i += 1
        else:  # a number, true, false or null
            j = i
            while j < len(text) and text[j] not in ",]}:" and text[j] not in _JSON_SPACE:
                j += 1
            i = j
        if depth < 0:
            raise ValueError("unbalanced")
        if depth == 0:
            return i
    raise ValueError("unterminated value")


def array_entries(text: str, start: int, end: int) -> list[int]:
    """Where each entry of the JSON array written at text[start:end] begins (none
    when it is not an array). One pass over it, without recursion."""
    if text[start : start + 1] != "[":
        return []
    found: list[int] = []
    try:
        i = _skip_space(text, start + 1)
        while i < end and text[i] != "]":
            found.append(i)
            i = _skip_space(text, _value_end(text, i))
            if text[i : i + 1] == ",":
                i = _skip_space(text, i + 1)
    except (ValueError, IndexError):
        return found
    return found
