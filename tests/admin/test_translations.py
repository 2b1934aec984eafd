"""The admin's catalogs (locale/): every string of ours translated into Spanish and
Brazilian Portuguese, the compiled .mo files the service reads up to date with the .po
files, and every label, column, filter and action of every admin page marked for
translation, so that a page added without marking its strings fails here."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib import admin
from django.contrib.admin import SimpleListFilter
from django.contrib.admin.utils import label_for_field
from django.test import RequestFactory
from django.utils import translation

ROOT = Path(settings.BASE_DIR)
LANGUAGES = ["es", "pt_BR"]
# The directories whose marked strings the catalogs hold (`make messages`).
SOURCES = [
    "analytics",
    "accounts",
    "business_numbers",
    "campaigns",
    "canned_replies",
    "contacts",
    "events",
    "inbound",
    "inbox",
    "sending",
    "messaging_project",
    "templates",
]
PLACEHOLDER = re.compile(r"%\(\w+\)[sdr]|%[sdr]")


def catalog(language: str) -> polib.POFile:
    return polib.pofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.po"))


def key(entry) -> tuple[str, str]:
    return (entry.msgctxt or "", entry.msgid)


def translations(entry) -> list[str]:
    if entry.msgid_plural:
        return [entry.msgstr_plural[n] for n in sorted(entry.msgstr_plural)]
    return [entry.msgstr]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_string_of_the_catalog_is_translated(language):
    po = catalog(language)
    assert not po.metadata_is_fuzzy, "a fuzzy header is skipped by msgfmt (no charset)"
    untranslated = [entry.msgid for entry in po if not all(translations(entry))]
    fuzzy = [entry.msgid for entry in po if entry.fuzzy]
    assert not untranslated, f"{language}: not translated: {untranslated}"
    assert not fuzzy, f"{language}: marked fuzzy (check, then drop the flag): {fuzzy}"
    for entry in po:
        for text in translations(entry):
            assert sorted(PLACEHOLDER.findall(text)) == sorted(PLACEHOLDER.findall(entry.msgid)), (
                f"{language}: {entry.msgid!r} -> {text!r}: the placeholders differ"
            )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_compiled_catalog_is_the_translated_one(language):
    """The .mo the service reads says what the .po says (`make messages` compiles it)."""
    po = catalog(language)
    mo = polib.mofile(str(ROOT / "locale" / language / "LC_MESSAGES" / "django.mo"))
    compiled = {key(entry): translations(entry) for entry in mo if entry.msgid}
    written = {key(entry): translations(entry) for entry in po if not entry.obsolete}
    assert compiled == written, f"locale/{language}: the .mo is stale; run `make messages`"
    assert mo.metadata.get("Content-Type") == "text/plain; charset=UTF-8"


@pytest.mark.slow
@pytest.mark.skipif(
    not shutil.which("xgettext"),
    reason="no GNU gettext (Debian's gettext package; .ci/run installs it)",
)
def test_every_marked_string_is_in_the_catalogs(tmp_path):
    """`make messages` on a copy of the sources finds exactly the catalogs' strings: a
    string marked and not gathered (nor translated) fails, and so does one left behind."""
    for name in SOURCES:
        shutil.copytree(
            ROOT / name,
            tmp_path / name,
            ignore=shutil.ignore_patterns("__pycache__", "migrations", "tests"),
        )
    shutil.copy(ROOT / "manage.py", tmp_path)
    shutil.copytree(ROOT / "locale", tmp_path / "locale")
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", *[f"-l{lang}" for lang in LANGUAGES]],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "VAR_DIR": str(tmp_path / "var")},
        check=True,
        capture_output=True,
    )
    for language in LANGUAGES:
        gathered = polib.pofile(str(tmp_path / "locale" / language / "LC_MESSAGES" / "django.po"))
        marked = {key(entry) for entry in gathered if not entry.obsolete}
        committed = {key(entry) for entry in catalog(language) if not entry.obsolete}
        assert not marked - committed, (
            f"{language}: marked but not in locale/ (run `make messages`, then translate): "
            f"{sorted(marked - committed)}"
        )
        assert not committed - marked, (
            f"{language}: in locale/ but no longer marked (run `make messages`): "
            f"{sorted(committed - marked)}"
        )


# Every admin page: its words are marked.

# The same in English, Spanish and Portuguese.
SAME_EVERYWHERE = {"URL", "total", "avatar", "endpoint", "webhook-id", "ID", "WhatsApp Cloud API"}


def shown_strings(superuser) -> list[tuple[str, str]]:
    """(where, text) for every label, column, filter, action, fieldset and help text the
    registered admin pages show a superuser, who sees every column and field."""
    request = RequestFactory().get("/admin/")
    request.user = superuser
    strings = []
    for model, model_admin in admin.site._registry.items():
        page = f"{model._meta.app_label}.{model._meta.model_name}"
        strings += [
            (page, model._meta.verbose_name),
            (page, model._meta.verbose_name_plural),
            (page, model._meta.app_config.verbose_name),
        ]
        for name in model_admin.get_list_display(request):
            strings.append((f"{page} column {name}", label_for_field(name, model, model_admin)))
        for spec in model_admin.get_list_filter(request):
            if isinstance(spec, type) and issubclass(spec, SimpleListFilter):
                strings.append((f"{page} filter", spec.title))
            else:
                field = spec[0] if isinstance(spec, tuple) else spec
                strings.append(
                    (f"{page} filter {field}", model._meta.get_field(field).verbose_name)
                )
        for name, (_, _, description) in model_admin.get_actions(request).items():
            strings.append((f"{page} action {name}", description))
        pages = [(model_admin, None)] + [
            (inline, inline.get_formset(request).form)
            for inline in model_admin.get_inline_instances(request)
        ]
        # The add page and the change page (an unsaved record stands for a saved one).
        for obj in (None, model()):
            for admin_page, inline_form in pages:
                strings += page_fields(request, page, admin_page, obj, inline_form)
    return strings


def page_fields(request, page, admin_page, obj, form) -> list[tuple[str, str]]:
    """The fieldsets, labels and help texts of one form of an admin page."""
    strings = []
    form = form or admin_page.get_form(request, obj, change=obj is not None)
    for title, options in admin_page.get_fieldsets(request, obj):
        if title:
            strings.append((f"{page} fieldset", title))
        if options.get("description"):
            strings.append((f"{page} fieldset", options["description"]))
    readonly = admin_page.get_readonly_fields(request, obj)
    for name in admin_page.get_fields(request, obj):
        if name in form.base_fields:
            field = form.base_fields[name]
            strings.append((f"{page} field {name}", field.label))
            if field.help_text:
                strings.append((f"{page} help {name}", field.help_text))
        elif name in readonly:
            label = label_for_field(name, admin_page.model, admin_page, form=form)
            strings.append((f"{page} field {name}", label))
    return strings


def test_every_admin_page_shows_its_words_translated(superuser):
    """Each string is looked up in Spanish and in Portuguese; one that comes back in
    English in both was not marked (or not translated). Django builds some labels
    itself ("Delete selected contacts"): they are translated by Django."""
    shown = {}
    for language in ("en", "es", "pt-br"):
        # Django builds some labels eagerly (a `__str__` column): each walk in its language.
        with translation.override(language):
            shown[language] = [(where, str(text)) for where, text in shown_strings(superuser)]
    assert len(shown["en"]) > 300  # every page, not an empty walk
    english = [
        f"{where}: {text!r}"
        for (where, text), (_, in_spanish), (_, in_portuguese) in zip(
            shown["en"], shown["es"], shown["pt-br"], strict=True
        )
        if text == in_spanish == in_portuguese and text not in SAME_EVERYWHERE
    ]
    assert all(text for _, text in shown["en"]), "a label is empty"
    assert not english, "shown in English whatever the language:\n" + "\n".join(english)
