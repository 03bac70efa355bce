"""The memory writer's output contract: what any engine answers to a run (``OUTPUT_SCHEMA``).

One operation per existing line (keep, replace or remove) plus any adds, each add or replace citing
the ids of the messages or actions it came from. The OpenAI engine asks for it as strict JSON-schema
output; the offline engine (``memory.writer.offline``) answers in the same shape. No Django here, so the
offline rules and their tests can import it.
"""

__all__ = ["OUTPUT_SCHEMA"]

OUTPUT_SCHEMA: dict = {
    "type": "object",
    "additionalProperties": False,
    "required": ["operations"],
    "properties": {
        "operations": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["op", "line", "text", "sources"],
                "properties": {
                    "op": {"type": "string", "enum": ["keep", "add", "replace", "remove"]},
                    "line": {"type": ["integer", "null"]},
                    "text": {"type": ["string", "null"]},
                    "sources": {"type": "array", "items": {"type": "string"}},
                },
            },
        }
    },
}
