"""Messages into clauses: sentences, then commas, dashes and the joining words of each language in
play ("and", "but", "so"; "y", "pero"; "aber", "und"; "aur", "lekin" ...), so that a guard that
refuses one clause leaves the others, and a rule reads one statement at a time.

A comma or a joining word before a tool's name does not split ("we use Slack, Jira and HubSpot");
the English "and"/"so"/"also" split only before a new subject ("... and we're on Linux").
"""

from __future__ import annotations

import re
from functools import cache

from memory.writer.offline.vocabulary import INTEGRATION, alternation, table

_HARD = re.compile(
    r"(?<=[.!?…।])\s+|[\n\r]+|;|\s[-–—]+\s|(?<=\w)[-–—]{2,}|\.{2,}|\s*\(\s*|\s*\)\s*|[!?]{2,}|:\s+(?=\w)"
)
_NO_SPLIT_AFTER = r"(?!\s*\d)"
_TOOL_AHEAD = re.compile(
    rf"\s*(?:{INTEGRATION})(?:\s*(?:,|&|\+|\band\b|\bor\b|\by\b|\bet\b|\bund\b|\be\b|\baur\b)\s*(?:{INTEGRATION}))*\s*(?:$|[,.;!?]|(?:for|as|to|in|on|with|at|across|but|so)\b)",
    re.I,
)
_TOOL_START = re.compile(rf"\s*(?:{INTEGRATION})\b", re.I)
_TOOL_BEHIND = re.compile(rf"(?:{INTEGRATION})\s*$", re.I)
_LEADING_JOINER = re.compile(
    r"^(?:(?:and|so|but|also|plus|then|or|y|et|und|e|aur|और|pero|mais|aber|mas|lekin|magar|toh|to)\s+)+", re.I
)


@cache
def _splitter(codes: tuple[str, ...]) -> re.Pattern[str]:
    always: set[str] = set()
    before_subject: set[str] = set()
    starters: set[str] = set()
    for code in codes:
        data = table(code)
        always.update(data.get("clause_split") or [])
        if code == "en":
            before_subject.update(data.get("clause_split_before_subject") or [])
            starters.update(data.get("clause_starters") or [])
        else:  # other languages: their joining words split wherever they stand
            always.update(data.get("clause_split_before_subject") or [])
    for code in codes:  # a word another language in play reads otherwise (Portuguese "não ... mais")
        not_joiners = set(table(code).get("not_joiners") or [])
        always -= not_joiners
        before_subject -= not_joiners
    parts = [rf",{_NO_SPLIT_AFTER}\s*"]
    if always:
        parts.append(rf"\s*,?\s+{alternation(always)}(?=\s){_NO_SPLIT_AFTER}\s*")
    if before_subject:
        parts.append(rf"\s*,?\s+{alternation(before_subject)}\s+(?={alternation(starters)}(?![\w]))")
    return re.compile("|".join(parts), re.I)


def split(text: str, codes: tuple[str, ...] = ("en",)) -> list[str]:
    """The clauses of one message, in order, stripped; empty pieces dropped."""
    splitter = _splitter(codes)
    out = []
    for sentence in _HARD.split(text or ""):
        if not sentence or not sentence.strip():
            continue
        start = 0
        pieces = []
        for match in splitter.finditer(sentence):
            if _TOOL_BEHIND.search(sentence[: match.start()]) and (
                _TOOL_AHEAD.match(sentence, match.end())
                or ("," not in match.group(0) and _TOOL_START.match(sentence, match.end()))
            ):
                continue  # a list of tools: "Slack, Jira and HubSpot", "Slack aur Jira use karte hain"
            pieces.append(sentence[start : match.start()])
            start = match.end()
        pieces.append(sentence[start:])
        for clause in pieces:
            clause = _LEADING_JOINER.sub("", clause.strip(" \t,.!?;:\"'“”"))
            if clause:
                out.append(clause)
    return out
