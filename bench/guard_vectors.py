"""The guards over other projects' own test vectors: python-stdnum's valid numbers and detect-secrets'
flagged and unflagged lines. Not a test (their files are not ours to ship): it prints figures.

    python bench/guard_vectors.py --stdnum PATH/TO/python-stdnum --detect-secrets PATH/TO/detect-secrets

``--stdnum`` reads ``tests/*.doctest`` of a python-stdnum checkout: every ``numbers = '''...'''`` block
that the doctest then asserts are all valid. Each number is offered as a line on its own and after its
format's own name ("PESEL 44051401359"); the figure is how many the guards refuse, per country.
``--detect-secrets`` reads ``tests/plugins/*_test.py`` of a detect-secrets checkout: the string lines of
every ``line,should_flag`` parametrisation with a literal boolean. The figures are how many flagged lines
the guards refuse and how many unflagged lines they refuse too (our guards refuse more on purpose: a
password with a value is refused whatever detect-secrets thinks of its entropy). Without a path, the
numbers python-stdnum's own docstrings show as valid (``>>> validate('...')`` then no error) are used.
No database or Django is needed.
"""

import argparse
import ast
import importlib
import pkgutil
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory import guards as policy

_BLOCK = re.compile(
    r">>> numbers = '''\n(.*?)\n\.\.\. '''\n>>> \[x for x in numbers\.splitlines\(\) if x and not (\w+)\.is_valid\(x\)\]\n\[\]",
    re.S,
)


def _format_name(module) -> str:
    first = (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""
    return first.split("(")[0].strip().rstrip(".") or module.__name__.rsplit(".", 1)[-1]


def stdnum_vectors(root: Path | None) -> list[tuple[str, str, str]]:
    """(module, name, number) for each valid number."""
    import stdnum

    found = []
    if root is not None:
        for path in sorted((root / "tests").glob("test_*.doctest")):
            stem = path.stem[len("test_") :]
            dotted = "stdnum." + stem.replace("_", ".", 1) if "_" in stem else f"stdnum.{stem}"
            dotted = dotted.replace("stdnum.in.", "stdnum.in_.").replace("stdnum.is.", "stdnum.is_.")
            try:
                module = importlib.import_module(dotted)
            except ImportError:
                continue
            name = _format_name(module)
            text = path.read_text(encoding="utf-8")
            for match in _BLOCK.finditer(text):
                for raw in match.group(1).splitlines():
                    number = raw.removeprefix("...").strip()
                    if number:
                        found.append((dotted, name, number))
        return found
    for info in pkgutil.walk_packages(stdnum.__path__, "stdnum."):
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            continue
        if not hasattr(module, "validate"):
            continue
        doc = module.__doc__ or ""
        for match in re.finditer(r">>> validate\('([^']+)'\)\n(?!Traceback)", doc):
            found.append((info.name, _format_name(module), match.group(1)))
    return found


def detect_secrets_vectors(root: Path) -> list[tuple[str, str, bool]]:
    """(plugin test file, line, should_flag) for each literal case."""
    found = []
    for path in sorted((root / "tests" / "plugins").glob("*_test.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"):
                continue
            if len(node.args) < 2 or not isinstance(node.args[0], ast.Constant):
                continue
            names = [n.strip() for n in str(node.args[0].value).split(",")]
            if "should_flag" not in names or not isinstance(node.args[1], ast.List):
                continue
            line_at, flag_at = (names.index("line") if "line" in names else 0), names.index("should_flag")
            for element in node.args[1].elts:
                if not isinstance(element, ast.Tuple) or len(element.elts) != len(names):
                    continue
                line, flag = element.elts[line_at], element.elts[flag_at]
                if isinstance(line, ast.Constant) and isinstance(line.value, str) and isinstance(flag, ast.Constant):
                    for piece in line.value.splitlines():
                        if piece.strip():
                            found.append((path.stem, piece.strip()[: policy.MAX_LINE_CHARS], bool(flag.value)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stdnum", type=Path, help="a python-stdnum checkout (its tests/*.doctest)")
    parser.add_argument("--detect-secrets", type=Path, help="a detect-secrets checkout (its tests/plugins)")
    parser.add_argument("--misses", action="store_true", help="print the modules whose numbers are kept")
    args = parser.parse_args()

    vectors = stdnum_vectors(args.stdnum)
    alone, named = Counter(), Counter()
    totals = Counter()
    kept_modules = Counter()
    for module, name, number in vectors:
        country = module.split(".")[1] if module.count(".") >= 2 else "intl"
        totals[country] += 1
        if policy.find_secret(number):
            alone[country] += 1
        else:
            kept_modules[module] += 1
        if policy.find_secret(f"{name} {number}"):
            named[country] += 1
    source = args.stdnum and "tests/*.doctest" or "its docstrings"
    print(f"python-stdnum ({source}): {len(vectors)} valid numbers of {len({m for m, _, _ in vectors})} formats")
    print(f"  refused alone: {sum(alone.values())} of {len(vectors)}; after the format's name: {sum(named.values())}")
    if args.misses:
        for module, count in kept_modules.most_common():
            print(f"  kept alone: {module} ({count})")
    if args.detect_secrets:
        cases = detect_secrets_vectors(args.detect_secrets)
        flagged = [line for _, line, flag in cases if flag]
        unflagged = [line for _, line, flag in cases if not flag]
        hit = sum(bool(policy.find_secret(line)) for line in flagged)
        extra = sum(bool(policy.find_secret(line)) for line in unflagged)
        print(f"detect-secrets (tests/plugins): {len(cases)} lines")
        print(f"  flagged by detect-secrets, refused here: {hit} of {len(flagged)}")
        print(f"  not flagged by detect-secrets, refused here: {extra} of {len(unflagged)}")


if __name__ == "__main__":
    main()
