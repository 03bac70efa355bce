"""Write memory/guards/vocabulary/stdnum.toml: every python-stdnum format with a check, measured.

For each module with is_valid() and compact(): the valid examples its docstring shows, their compact
lengths and alphabet, whether a checksum is there at all (changing one character of a valid example
makes it invalid nearly always), and how often a random value of that length and alphabet passes
(the collision rate: a rate above the limit needs a context word). Run after upgrading python-stdnum:
    python memory/guards/vocabulary/make_stdnum.py
"""

import importlib
import json
import pkgutil
import random
import re
import string
import sys
from pathlib import Path

import stdnum

SKIP = {
    "stdnum.iban",
    "stdnum.luhn",
    "stdnum.verhoeff",
    "stdnum.damm",
    "stdnum.iso7064",
    "stdnum.numdb",
    "stdnum.util",
    "stdnum.exceptions",
    "stdnum.isbn",
    "stdnum.ismn",
    "stdnum.issn",
    "stdnum.isan",
    "stdnum.ean",
    "stdnum.gs1_128",
    "stdnum.grid",
    "stdnum.isil",
    "stdnum.iso6346",
    "stdnum.imo",
    "stdnum.isrc",
    "stdnum.iso11649",
    "stdnum.iso9362",
    "stdnum.bic",
    "stdnum.mac",
    "stdnum.casrn",
    "stdnum.cusip",
    "stdnum.isin",
    "stdnum.figi",
    "stdnum.lei",
    "stdnum.meid",
    "stdnum.imei",
    "stdnum.imsi",
    "stdnum.vatin",
    "stdnum.eu.vat",
    "stdnum.eu.ecnumber",
    "stdnum.eu.nace",
    "stdnum.eu.banknote",
    "stdnum.eu.oss",
    "stdnum.eu.eic",
    "stdnum.sedol",
    "stdnum.ru.ogrn",
    "stdnum.isni",
}
# Country formats that name no person nor their account: an IBAN (its own rule), a meter, a land parcel.
NOT_A_PERSON = {"iban", "cups", "cae", "referenciacatastral", "postcode", "postal_code", "postleitzahl"}
# Formats of goods, companies, securities and codes that are not a person's: skipped above. Banks:
BANK = re.compile(r"\.(?:ccc|cbu|clabe|bban|bankaccount|iban|bic|rib|account|bsb|konto|bankgiro|plusgiro|cb)\b|bank")


def examples(module):
    doc = module.__doc__ or ""
    found = []
    for m in re.finditer(r">>> (?:validate|is_valid)\('([^']+)'\)[^\n]*\n(\S[^\n]*)", doc):
        if m.group(2).startswith("Traceback") or m.group(2) == "False":
            continue
        found.append(m.group(1))
    return found


def _century_lengths(module, valid: list[str]) -> set[int]:
    """A date-led id written with its century ("19880412-3571" for "880412-3571") is the same id."""
    found = set()
    for v in valid:
        for century in ("19", "20"):
            try:
                if v.isdigit() and module.is_valid(century + v):
                    found.add(len(v) + 2)
            except Exception:
                pass
    return found


def _layouts(module, valid: list[str]) -> list[str]:
    """How the format prints its examples (``format()``), digits as 9 and letters as A, when the print holds a
    separator other than a space ("999999/9999", "999999-9999999"): a value written so is this id."""
    found = set()
    for v in valid:
        try:
            printed = module.format(v)
        except Exception:
            continue
        layout = re.sub(r"[A-Z]", "A", re.sub(r"\d", "9", printed.upper()))
        if re.search(r"[/\-.]", layout) and sum(c in "9A" for c in layout) >= 8:
            found.add(layout)
    return sorted(found)


def _checked_module(name: str):
    """The module of a country format with is_valid() and compact(), or ``None``."""
    if name in SKIP or name.count(".") < 2 or name.rsplit(".", 1)[1] in NOT_A_PERSON:
        return None
    try:
        module = importlib.import_module(name)
    except Exception:
        return None
    return module if hasattr(module, "is_valid") and hasattr(module, "compact") else None


def _valid_examples(module) -> list[str]:
    valid = []
    for ex in examples(module):
        try:
            c = module.compact(ex)
        except Exception:
            continue
        if module.is_valid(ex):
            valid.append(re.sub(r"[\s.\-/]", "", c).upper())
    return valid


def _detects(module, valid: list[str]) -> float:
    """The share of one-character changes to a valid example the check rejects."""
    changed = total = 0
    for v in valid:
        for i in range(len(v)):
            alphabet = string.digits if v[i].isdigit() else string.ascii_uppercase
            for c in alphabet:
                if c == v[i]:
                    continue
                total += 1
                changed += not module.is_valid(v[:i] + c + v[i + 1 :])
    return changed / total if total else 0


def _random_like(rng: random.Random, v: str) -> str:
    return "".join(
        rng.choice(string.digits) if ch.isdigit() else rng.choice(string.ascii_uppercase) if ch.isalpha() else ch
        for ch in v
    )


def _collide(module, valid: list[str], rng: random.Random, trials: int = 4000) -> float:
    """The share of random values shaped like the examples (letters where they have letters) the check accepts."""
    hits = 0
    for _ in range(trials):
        try:
            hits += bool(module.is_valid(_random_like(rng, rng.choice(valid))))
        except Exception:
            pass
    return hits / trials


def measure() -> list[tuple]:
    """One row per checksummed format: (module, title, lengths, digits, detects, collide, bank, layouts)."""
    rows = []
    rng = random.Random(24)
    for info in pkgutil.walk_packages(stdnum.__path__, "stdnum."):
        module = _checked_module(info.name)
        valid = _valid_examples(module) if module else []
        if not valid:
            continue
        detects = _detects(module, valid)
        if detects < 0.5:
            continue  # no check: a format, not a checksum
        title = (module.__doc__ or "").strip().splitlines()[0].strip().rstrip(".")
        rows.append(
            (
                info.name,
                title,
                sorted({len(v) for v in valid} | _century_lengths(module, valid)),
                all(v.isdigit() for v in valid),
                round(detects, 3),
                _collide(module, valid, rng),
                bool(BANK.search(info.name + " " + title.lower())),
                _layouts(module, valid),
            )
        )
    return rows


def render(rows: list[tuple]) -> str:
    out = [
        "# python-stdnum's checksummed formats, measured by memory/guards/vocabulary/make_stdnum.py (python-stdnum "
        f"{stdnum.__version__}): do not edit by hand.",
        "#   module     the python-stdnum module whose is_valid() a compact value must pass",
        "#   title      its own first docstring line: its acronym and name are its context words",
        "#   lengths    the compact lengths of its valid examples; digits: examples are all digits",
        "#   detects    share of one-character changes to a valid example its check rejects",
        "#   collide    share of random values of the examples' shapes it accepts (above the id rule's limit a",
        "#              context word is needed)",
        "#   bank       a bank account, not a government id",
        "#   layouts    how format() prints it (9 a digit, A a letter), when with a separator: a value so written",
        "#              needs no context word",
        "",
    ]
    for name, title, lengths, digits, detects, collide, bank, layouts in rows:
        out.append("[[format]]")
        out.append(f'module = "{name[len("stdnum.") :]}"')
        out.append("title = " + json.dumps(title, ensure_ascii=False))
        out.append(f"lengths = {lengths}")
        out.append(f"digits = {'true' if digits else 'false'}")
        out.append(f"detects = {detects}")
        out.append(f"collide = {collide}")
        if bank:
            out.append("bank = true")
        if layouts:
            out.append("layouts = " + json.dumps(layouts))
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":  # only when run: importing it (a test that imports every module) writes nothing
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "stdnum.toml"
    rows = measure()
    target.write_text(render(rows), encoding="utf-8")
    print(len(rows), "formats")
