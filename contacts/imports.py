"""Reading a contacts import: a CSV file as spreadsheets write them, an Excel workbook
(the original product's export, read as CSV by contacts/workbooks.py), or a JSON list.

Everything that can make a whole CSV file unusable is found here, before anything is
stored: the encoding (UTF-8 with or without a byte-order mark; anything else is read as
Latin-1, as spreadsheets on Windows export it), the delimiter (comma, semicolon or tab,
chosen by the header row), the header (it must name a phone column), the size and the
number of rows. Such a file is refused whole (ImportRefused, a 400 on `file`). The web
process only checks a file (checked_file), reading it a buffer at a time, and streams it
to storage; the task makes its rows. A workbook's sheet is read by the task alone
(workbook_rows: 100,000 rows take openpyxl tens of seconds): the request checks only its
size and its zip's directory, and the task reports what the sheet's CSV fails as the
import's failure. The rows' own values (a bad phone, a bad email, text a database cannot
store) are checked row by row when the import runs (contacts.importing.import_rows), so
that one bad row does not stop the others.

Cells marked as text by the export (a `'` before a formula's first character) are read
without the mark (contacts.representations.unmarked_cell).

A row is `[number, {field: value}]`: the known fields under their own names (the
original product's `Group name` is `group`, its `Street`...`Country` the address's parts)
and, under `metadata`, the other columns by their header as written, with their text.
"""

import codecs
import csv
import io
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any, NamedTuple, cast

from django.core.exceptions import ValidationError
from django.core.files import File
from django.utils.translation import gettext_noop

from contacts import workbooks
from contacts.representations import ADDRESS_KEYS, unmarked_cell

# The largest file (and JSON body) taken, and the most rows; the web server and the API's
# body limit let a request this large through to the import alone (settings).
MAX_BYTES = 20 * 1024 * 1024
MAX_ROWS = 200_000

# Yes-or-no columns (the export's): how their cells may say it; a blank keeps the value.
FLAGS = ("is_favorite", "opted_out")
FLAG_VALUES = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False}
# Header names as matched: lower case, without spaces, underscores or hyphens.
COLUMNS = {
    "firstname": "first_name",
    "lastname": "last_name",
    "phone": "phone",
    "phonenumber": "phone",
    "email": "email",
    "group": "group",
    "groupname": "group",  # the original product's export
    "contactgroup": "group",
    "metadata": "metadata",
    **{key: key for key in ADDRESS_KEYS},
    "zipcode": "zip",
    "postalcode": "zip",
    "isfavorite": "is_favorite",
    "favorite": "is_favorite",
    "optedout": "opted_out",
}
DELIMITERS = (",", ";", "\t")

# In English, the API's language; marked so that the admin shows them translated.
NOT_CSV = gettext_noop("The file is not a CSV text file.")
EMPTY_FILE = gettext_noop("The file holds no contacts.")
TOO_LARGE = gettext_noop("The file is larger than 20 MB.")
TOO_MANY_ROWS = gettext_noop("An import holds at most 200,000 contacts.")
NO_PHONE_COLUMN = gettext_noop(
    "The file's first row must name its columns, one of them phone "
    "(first_name, last_name, phone, email, group)."
)
REPEATED_COLUMN = gettext_noop("The column %(column)s appears twice.")
UNREADABLE_CSV = gettext_noop("The file could not be read as CSV: %(reason)s.")
NOT_A_LIST = gettext_noop("Send the contacts as a list of objects.")
NOT_AN_OBJECT = gettext_noop("Each contact must be an object.")
NOT_TEXT = gettext_noop("The field %(field)s of contact %(row)s must be text or a number.")
NOT_A_WORKBOOK = gettext_noop("The file is not an Excel workbook (.xlsx) that can be read.")
WORKBOOK_TOO_LARGE = gettext_noop("The workbook unpacks to more than 256 MB.")
WORKBOOK_TOO_MANY_PARTS = gettext_noop("The workbook holds more than 1,000 parts.")
WORKBOOK_PROBLEMS = {
    "not_a_workbook": NOT_A_WORKBOOK,
    "too_large_unpacked": WORKBOOK_TOO_LARGE,
    "too_many_parts": WORKBOOK_TOO_MANY_PARTS,
    "empty": EMPTY_FILE,
}

Row = list  # [number, {field: value}]


class ImportRefused(ValidationError):
    """The whole file is unusable; nothing was stored."""


def refuse(key: str, message: str, /, **params: Any) -> ImportRefused:
    return ImportRefused({key: [ValidationError(message, params=params or None)]})


def column_key(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name.strip().lower())


def file_encoding(file: File) -> str:
    """How the file's text is read: UTF-8 (a byte-order mark dropped), else Latin-1.
    Read a chunk at a time: the file is never held whole."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    utf8 = True
    for chunk in file.chunks():
        if b"\x00" in chunk:  # UTF-16, a spreadsheet's binary format, an image...
            raise refuse("file", NOT_CSV)
        if utf8:
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                utf8 = False
    if utf8:
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            utf8 = False
    return "utf-8-sig" if utf8 else "latin-1"


@contextmanager
def text_of(file: File, encoding: str) -> Iterator[io.TextIOWrapper]:
    """The file's text from its start, read a buffer at a time (newline="": the csv
    reader splits lines itself, quoted line breaks included); the file stays open."""
    raw: Any = file  # a File, then the binary file under Django's wrappers
    while isinstance(raw, File):
        raw = raw.file
    raw.seek(0)
    text = io.TextIOWrapper(raw, encoding=encoding, newline="")
    try:
        yield text
    finally:
        text.detach()


def header_of(file: File, encoding: str, delimiter: str) -> list[str]:
    with text_of(file, encoding) as text:
        first = next(csv.reader(text, delimiter=delimiter), [])
    return [name.strip() for name in first]


def chosen_delimiter(file: File, encoding: str) -> str:
    """The delimiter whose header row names a phone column; of several, the one giving
    the most columns (a header `phone;name,surname` is two columns by semicolon)."""
    found = []
    for delimiter in DELIMITERS:
        header = header_of(file, encoding, delimiter)
        if any(COLUMNS.get(column_key(name)) == "phone" for name in header):
            found.append((len(header), delimiter))
    if not found:
        raise refuse("file", NO_PHONE_COLUMN)
    return max(found)[1]


class CheckedFile(NamedTuple):
    """An upload that passed the request's checks: a CSV file with its encoding and its
    number of rows, or a workbook (`workbook`; its sheet is read by the task, so neither
    is known yet)."""

    file: File
    encoding: str
    rows: int
    workbook: bool = False


def checked_file(file: File) -> CheckedFile:
    """An uploaded file once the request's checks have passed (ImportRefused otherwise).
    A CSV file gets every check csv_rows makes, read a line at a time and without making
    its rows: the web process streams the file to storage, and the import's task reads
    it (a 100,000-row file's rows cost the request more than a second of the interpreter,
    which its other requests wait for). A workbook gets checked_workbook's."""
    # A Django File is a binary file, as openpyxl and zipfile read one.
    if workbooks.looks_like_workbook(cast(IO[bytes], file), file.name or ""):
        checked_workbook(file)
        return CheckedFile(file, encoding="", rows=0, workbook=True)
    encoding, _rows, count = read_csv(file, with_rows=False)
    return CheckedFile(file, encoding, count)


def checked_workbook(file: File) -> None:
    """What the request checks of a workbook, cheap at any size: its size and its zip's
    directory (the zip bomb's checks, contacts/workbooks.py), nothing unpacked;
    ImportRefused when it fails."""
    if file.size is not None and file.size > MAX_BYTES:
        raise refuse("file", TOO_LARGE)
    try:
        workbooks.checked_zip(cast(IO[bytes], file))
    except workbooks.UnusableWorkbook as unusable:
        raise refuse("file", WORKBOOK_PROBLEMS[unusable.reason]) from None
    file.seek(0)


def workbook_rows(file: IO[bytes]) -> list[Row]:
    """The rows of a stored workbook's first sheet, read as the CSV file it makes
    (contacts/workbooks.py; the import's task): ImportRefused when that CSV file, or the
    workbook, is unusable as a whole."""
    try:
        converted = workbooks.workbook_csv(file, max_rows=MAX_ROWS)
    except workbooks.TooManyRows:
        raise refuse("file", TOO_MANY_ROWS) from None
    except workbooks.UnusableWorkbook as unusable:
        raise refuse("file", WORKBOOK_PROBLEMS[unusable.reason]) from None
    with converted:
        # UTF-8, as workbook_csv writes it; its size is bounded by what the workbook
        # unpacks to, checked before.
        csv_file = File(converted, name="contacts.csv")
        return read_csv(csv_file, with_rows=True, encoding="utf-8", check_size=False)[1]


def csv_rows(data: bytes | File, encoding: str | None = None) -> list[Row]:
    """The rows of a CSV file (ImportRefused when the file as a whole is unusable)."""
    file = data if isinstance(data, File) else File(io.BytesIO(data))
    # Its size was checked when it came (a workbook's CSV may be larger than an upload).
    return read_csv(file, with_rows=True, encoding=encoding, check_size=False)[1]


def read_csv(
    file: File, *, with_rows: bool, encoding: str | None = None, check_size: bool = True
) -> tuple[str, list[Row], int]:
    """The file's encoding, its rows (none unless `with_rows`) and their number;
    `check_size`: refuse a file over MAX_BYTES (an upload)."""
    if check_size and file.size is not None and file.size > MAX_BYTES:
        raise refuse("file", TOO_LARGE)
    encoding = encoding or file_encoding(file)
    with text_of(file, encoding) as text:
        if not any(line.strip() for line in text):
            raise refuse("file", EMPTY_FILE)
    rows: list[Row] = []
    count = 0
    try:  # a cell over the csv module's field limit may be anywhere, the header too
        delimiter = chosen_delimiter(file, encoding)
        with text_of(file, encoding) as text:
            reader = csv.reader(text, delimiter=delimiter, strict=True)
            header = [name.strip() for name in next(reader)]
            fields = header_fields(header)
            for record in reader:
                if not "".join(record).strip():
                    continue  # a blank line
                if count >= MAX_ROWS:
                    raise refuse("file", TOO_MANY_ROWS)
                count += 1
                if with_rows:
                    # The spreadsheet's row number: the header is row 1.
                    rows.append([reader.line_num, row_values(fields, header, record)])
    except csv.Error as error:
        raise refuse("file", UNREADABLE_CSV, reason=str(error)) from None
    except StopIteration:  # no line at all
        raise refuse("file", EMPTY_FILE) from None
    if not count:
        raise refuse("file", EMPTY_FILE)
    return encoding, rows, count


def header_fields(header: list[str]) -> list[str | None]:
    """The field of each column: a known one, or None (kept in metadata)."""
    fields: list[str | None] = []
    for name in header:
        field = COLUMNS.get(column_key(name))
        if field is not None and field in fields:
            raise refuse("file", REPEATED_COLUMN, column=name)
        fields.append(field)
    return fields


def row_values(fields: list[str | None], header: list[str], record: list[str]) -> dict:
    values: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for field, name, value in zip(fields, header, record, strict=False):
        value = unmarked_cell(value.strip())  # as the export marked it (docs/contacts.md)
        if field == "metadata":
            metadata.update(metadata_object(value))
        elif field is not None:
            values[field] = value
        elif value and name:
            metadata[name] = value
    if metadata:
        values["metadata"] = metadata
    return values


def metadata_object(value: str) -> dict:
    """A `metadata` column as the export writes it: a JSON object (else kept as text)."""
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError:
        return {"metadata": value}
    return parsed if isinstance(parsed, dict) else {"metadata": value}


def json_rows(contacts: Any) -> list[Row]:
    """The rows of a JSON import, `{"contacts": [{...}, ...]}`: the same fields, matched
    as headers are, and any other key kept in metadata (as is `metadata`, an object)."""
    if not isinstance(contacts, list) or not contacts:
        raise refuse("contacts", NOT_A_LIST)
    if len(contacts) > MAX_ROWS:
        raise refuse("contacts", TOO_MANY_ROWS)
    rows: list[Row] = []
    for number, contact in enumerate(contacts, start=1):
        if not isinstance(contact, dict):
            raise refuse("contacts", NOT_AN_OBJECT)
        values: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        for name, value in contact.items():
            key = column_key(str(name))
            field = COLUMNS.get(key)
            if field == "metadata" and isinstance(value, dict):
                metadata.update(value)
            elif key == "address" and isinstance(value, dict):  # as the API writes it
                for part in ADDRESS_KEYS:
                    if part in value:
                        values[part] = json_text(value[part], field=f"address.{part}", row=number)
            elif field in FLAGS and isinstance(value, bool):
                values[field] = "1" if value else "0"
            elif field is not None and field != "metadata":
                values[field] = json_text(value, field=str(name), row=number)
            elif value is not None:
                metadata[str(name)] = value
        if metadata:
            values["metadata"] = metadata
        rows.append([number, values])
    return rows


def json_text(value: Any, *, field: str, row: int) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise refuse("contacts", NOT_TEXT, field=field, row=row)
    return str(value).strip()
