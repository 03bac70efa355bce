"""The functions longer than a limit (80 lines by default), longest first: issue 26's "no function over 80 lines".

A function's length is its lines from `def` to its last line, docstring and comments included, since that is
what a reader scrolls through. Nested functions count on their own and inside their parent.

    .venv/bin/python bench/function_lengths.py [--limit 80] [paths ...]
"""

import argparse
import ast
import sys
from pathlib import Path

APPS = ("agents", "consent", "memory", "webhooks", "ops", "surfaces", "agentnava_site")


def long_functions(paths: list[Path], limit: int) -> list[tuple[int, str]]:
    """Every function over `limit` lines under `paths`, as (length, "path:line name"), longest first."""
    found = []
    for root in paths:
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in files:
            if "migrations" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    length = node.end_lineno - node.lineno + 1
                    if length > limit:
                        found.append((length, f"{path}:{node.lineno} {node.name}"))
    return sorted(found, key=lambda item: (-item[0], item[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("paths", nargs="*", type=Path, default=[Path(app) for app in APPS])
    args = parser.parse_args()
    found = long_functions(args.paths, args.limit)
    for length, where in found:
        print(f"{length:4d}  {where}")
    print(f"{len(found)} functions over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
