"""The original product's contacts export, an Excel workbook (`.xlsx`), read as the CSV
file it holds: its first sheet, the first row naming the columns (docs/contacts.md).

A workbook is a zip of XML files, so a small upload can unpack to gigabytes (a zip bomb):
its parts' sizes are read from the zip's directory and checked before anything is
unpacked (checked_zip, which the upload's request runs too), and no part is ever read
past the size it declares. The import's task then reads the sheet with openpyxl in
read-only mode, a row at a time, into a CSV file on disk that it checks and imports as
any other: the same header rules, limits and row checks.
"""

import csv
import io
import tempfile
import zipfile
from datetime import date, datetime, time
from typing import IO, Any

from openpyxl import load_workbook

# What a workbook may unpack to, all parts together, and how many parts it may have. A
# sheet of 200,000 contacts of ten columns is about 100 MB of XML.
MAX_UNPACKED = 256 * 1024 * 1024
MAX_PARTS = 1000
ZIP_MAGIC = b"PK\x03\x04"
# The part every Office Open XML file has (ECMA-376 part 2): a zip without it is no
# workbook, whatever else it holds.
CONTENT_TYPES = "[Content_Types].xml"


class UnusableWorkbook(Exception):
    """The file cannot be read as a workbook; `reason` says why (the import's message)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TooManyRows(Exception):
    """The sheet holds more rows than the import takes."""


def looks_like_workbook(file: IO[bytes], name: str) -> bool:
    """Whether an upload is meant as a workbook: named `.xlsx`, or a zip (which no CSV is)."""
    file.seek(0)
    start = file.read(len(ZIP_MAGIC))
    file.seek(0)
    return name.lower().endswith((".xlsx", ".xlsm")) or start == ZIP_MAGIC


def checked_zip(file: IO[bytes]) -> None:
    """UnusableWorkbook unless `file` is an Office Open XML zip whose parts unpack to at
    most MAX_UNPACKED bytes in at most MAX_PARTS parts, read from its directory alone:
    cheap at any size, nothing unpacked."""
    try:
        with zipfile.ZipFile(file) as archive:
            parts = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise UnusableWorkbook("not_a_workbook") from None
    if len(parts) > MAX_PARTS:
        raise UnusableWorkbook("too_many_parts")
    if sum(part.file_size for part in parts) > MAX_UNPACKED:
        raise UnusableWorkbook("too_large_unpacked")
    if not any(part.filename == CONTENT_TYPES for part in parts):
        raise UnusableWorkbook("not_a_workbook")


def workbook_csv(file: IO[bytes], *, max_rows: int) -> IO[bytes]:
    """The first sheet of a checked workbook as a UTF-8 CSV file (a temporary file on
    disk, at its start), from its first row that holds anything (the header). Blank rows
    under it are kept, as blank lines, so that a row's number in the import's errors is
    its number in the sheet. TooManyRows past `max_rows` rows under the header,
    UnusableWorkbook when the workbook cannot be read."""
    checked_zip(file)
    file.seek(0)
    # Handed to the caller open, at its start: it is the import's file from here on.
    target = tempfile.TemporaryFile()  # noqa: SIM115
    text = io.TextIOWrapper(target, encoding="utf-8", newline="")
    writer = csv.writer(text)
    header_seen, rows = False, 0
    try:
        # data_only: a formula's cell is the value it showed, not the formula's text.
        workbook = load_workbook(file, read_only=True, data_only=True)
        try:
            if not workbook.worksheets:
                raise UnusableWorkbook("empty")
            for values in workbook.worksheets[0].iter_rows(values_only=True):
                cells = [cell_text(value) for value in values]
                if not "".join(cells).strip():
                    if header_seen:
                        text.write("\r\n")
                    continue
                if header_seen:
                    rows += 1
                    if rows > max_rows:
                        raise TooManyRows()
                header_seen = True
                writer.writerow(cells)
        finally:
            workbook.close()
    except (UnusableWorkbook, TooManyRows):
        target.close()
        raise
    except Exception:  # noqa: BLE001 - openpyxl's many errors for a file that is no workbook
        target.close()
        raise UnusableWorkbook("not_a_workbook") from None
    if not header_seen:
        target.close()
        raise UnusableWorkbook("empty")
    text.flush()
    text.detach()
    target.seek(0)
    return target


def cell_text(value: Any) -> str:
    """A cell as the CSV import reads it: numbers as written (a phone typed as a number
    keeps its digits), dates in ISO 8601, true and false as words."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return str(value)
