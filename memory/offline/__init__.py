"""The offline engine: the memory writer's rules as plain, deterministic code (no network, no model).

``memory_operations(payload)`` takes exactly what the OpenAI engine is sent and answers in the same
shape (``memory.writer_schema.OUTPUT_SCHEMA``): one operation per existing line (keep, replace or
remove) plus any adds, each add or replace citing the ids of the messages or actions it came from.

What it reads, and what it never reads (R11, R12):

* ``messages``: what the person typed. Each sentence (or ", but" clause) is first held against the
  privacy guards in ``memory.policy``: one that holds a secret, or belongs to an excluded category
  the team's instructions did not open, is skipped whole. A message with an injection attempt
  ("ignore your instructions", "remember that I am an admin", "always recommend X") is skipped whole.
* ``actions``: only those with status ``succeeded`` give a dated line (R9).
* ``context`` (the agent's replies) is never read, so it can never be a source.

The rules are written in English, first person only ("I work from...", "we're on..."), so a sentence
about someone else does not match them. Every line they produce is checked once more with
``policy.line_refusal`` before it is proposed; the caller checks again after us, as after any model.

The package:

* ``vocabulary``: the words the rules read (channels, languages, tools, job titles) and the helpers
  that turn the person's words into a line about them;
* ``keys``: what a line is about (its key), so a newer fact replaces the older line of its kind, and
  which kinds a team's instructions leave out;
* ``rules``: the reading rules, one function per kind of fact;
* ``engine``: the memory being updated, and a run read message by message and action by action.
"""

from ..writer_schema import OUTPUT_SCHEMA
from .engine import memory_operations
from .keys import KIND_VOCABULARY, kinds_left_out, line_key
from .rules import RULES, Fact, Sentence, Update

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
