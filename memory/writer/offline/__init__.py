"""The offline engine: the memory writer's rules as plain, deterministic code (no network, no model).

``memory_operations(payload)`` takes exactly what the OpenAI engine is sent and answers in the same
shape (``memory.writer.schema.OUTPUT_SCHEMA``): one operation per existing line (keep, replace or
remove) plus any adds, each add or replace citing the ids of the messages or actions it came from.

It is rules, not a model: deterministic (the same payload always gives the same operations), no
network, no randomness. Right or silent: a rule that is unsure says nothing.

What it reads, and what it never reads (R11, R12):

* ``messages``: what the person typed, split into clauses (``clauses``). Each clause something is read
  from is held against the guards on its own (``engine.clause_refusal``: an injection marker, then
  ``memory.guards``'s secret and category checks with the categories the team's instructions open);
  a refused clause is skipped alone, and the rest of the message still counts.
* ``actions``: only those with status ``succeeded`` give a dated line (R9); a purchase or booking is
  left out only when a clause says it was for someone else.
* ``context`` (the agent's replies) is never read, so it can never be a source.

The rules read first person only ("I work from...", "we're on...", "soy...", "main ... hoon"), so a
clause about someone else does not match them, and read negation and contrast with their scope
("don't call me" is never read as phone). Every line they produce is checked with
``policy.line_refusal`` and ``policy.source_refusal`` before it is proposed, as the writer will check
it again after us; a replacement that may not be written removes the line it contradicts.

The package:

* ``vocabulary``: the words the rules read (channels, languages, tools, job titles), loaded from
  ``phrases/en.json``, and the helpers that turn the person's words into a line about them;
* ``phrases/<language>.json``: per-language phrase tables (en, es, fr, de, pt, hi), data not code;
* ``tables``: the small rules engine that reads those tables (slots such as ``{channel}``, ``{place}``);
* ``clauses``: a message into clauses, with each language's joining words;
* ``keys``: what a line is about (its key), so a newer fact replaces the older line of its kind, and
  which kinds a team's instructions leave out;
* ``rules``: the reading rules, one function per kind of fact (English rules in code; the tables'
  matches turned into lines by ``from_tables``);
* ``engine``: the memory being updated, and a run read message by message and action by action.
"""

from memory.writer.offline.engine import memory_operations
from memory.writer.offline.keys import KIND_VOCABULARY, kinds_left_out, line_key
from memory.writer.offline.rules import RULES, Fact, Sentence, Update
from memory.writer.schema import OUTPUT_SCHEMA

__all__ = [
    "KIND_VOCABULARY",
    "OUTPUT_SCHEMA",
    "RULES",
    "Fact",
    "Sentence",
    "Update",
    "kinds_left_out",
    "line_key",
    "memory_operations",
]
