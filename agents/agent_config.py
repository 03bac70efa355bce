"""An agent's configuration: its shape, its defaults, and the one validator every path uses.

The web form, the Builder and the API all reach `validate_config` (through `agents.services`), so
invalid settings (quietMinutes 7, keepForDays 0, a privacyUrl that is not http(s)) are refused
everywhere with the same message. This module owns the agent's own keys (instructions, guardrails,
actions) and the plan rule (R3). A section another app owns is validated by that app: the setting
`AGENTNAVA_CONFIG_SECTIONS` names, for each such key, the module that holds its `default()`,
`validate(value)` and `describe_changes(old, new)` (`memorySettings`: `memory.store.settings`), as
Django's settings name its backends and password validators. Nothing fills anything at start-up.
"""

import copy
import re
from importlib import import_module
from types import ModuleType
from typing import Any

from django.conf import settings

from agents.errors import AppError, InvalidConfig

MAX_ACTIONS = 50
ACTION_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

DEFAULT_CONFIG: dict[str, Any] = {
    "instructions": "You are a helpful support agent. Answer plainly and briefly.",
    "guardrails": "",
    "actions": [],
}


def config_sections() -> dict[str, ModuleType]:
    """The sections other apps own, by configuration key: each module has `default()`,
    `validate(value)` (normalised, or InvalidConfig naming the field) and `describe_changes(old, new)`."""
    return {key: import_module(path) for key, path in settings.AGENTNAVA_CONFIG_SECTIONS.items()}


def default_config() -> dict[str, Any]:
    sections = {key: section.default() for key, section in config_sections().items()}
    return {**copy.deepcopy(DEFAULT_CONFIG), **sections}


def checked_bool(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidConfig(f"{field} must be true or false.", field=field)
    return value


def checked_text(value: Any, field: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidConfig(f"{field} must be text.", field=field)
    value = value.strip()
    if len(value) > limit:
        raise InvalidConfig(f"{field} is too long: at most {limit} characters.", field=field)
    return value


def checked_int(value: Any, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidConfig(f"{field} must be a whole number.", field=field)
    return value


def validate_actions(actions: Any) -> list[dict[str, str]]:
    if not isinstance(actions, list) or len(actions) > MAX_ACTIONS:
        raise InvalidConfig(f"actions must be a list of at most {MAX_ACTIONS}.", field="actions")
    out, seen = [], set()
    for i, action in enumerate(actions):
        if not isinstance(action, dict) or set(action) - {"name", "label"}:
            raise InvalidConfig("Each action has a name and a past-tense label.", field=f"actions[{i}]")
        name = checked_text(action.get("name", ""), f"actions[{i}].name", 64)
        if not ACTION_NAME_RE.match(name):
            raise InvalidConfig(
                "An action name is lower-case letters, digits and underscores, e.g. renew_plan.",
                field=f"actions[{i}].name",
            )
        if name in seen:
            raise InvalidConfig(f"The action {name} is listed twice.", field=f"actions[{i}].name")
        seen.add(name)
        label = checked_text(action.get("label", ""), f"actions[{i}].label", 80) or name.replace("_", " ").capitalize()
        out.append({"name": name, "label": label})
    return out


def validate_config(config: Any, *, plan_has_memory: bool) -> dict[str, Any]:
    """Return a complete, normalised config, or raise.

    Refuses unknown keys, wrong types and out-of-range settings (InvalidConfig), and memory
    switched on for a plan without memory (AppError `plan_required`, R3).
    """
    if not isinstance(config, dict):
        raise InvalidConfig("The configuration must be an object.")
    sections = config_sections()
    unknown = sorted(set(config) - {*DEFAULT_CONFIG, *sections})
    if unknown:
        raise InvalidConfig(f"Unknown configuration field: {', '.join(unknown)}.", field=unknown[0])
    merged = {**default_config(), **config}
    out = {
        "instructions": checked_text(merged["instructions"], "instructions", 8000),
        "guardrails": checked_text(merged["guardrails"], "guardrails", 8000),
        "actions": validate_actions(merged["actions"]),
        **{key: section.validate(merged[key]) for key, section in sections.items()},
    }
    if out.get("memorySettings", {}).get("on") and not plan_has_memory:
        raise AppError(
            "plan_required",
            "Memory comes with the Team plan and up. Upgrade the team's plan to turn it on.",
            field="memorySettings.on",
        )
    return out


def merge_changes(config: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """Apply a partial change; `memorySettings` merges field by field, the rest replace."""
    if not isinstance(changes, dict):
        raise InvalidConfig("The change must be an object.")
    out = copy.deepcopy(config)
    for key, value in changes.items():
        if key == "memorySettings" and isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        else:
            out[key] = value
    return out


def describe_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Readable one-line descriptions of what differs, e.g. 'quiet minutes 30 -> 15'."""
    changes = [
        change
        for key, section in config_sections().items()
        for change in section.describe_changes(old.get(key, {}), new.get(key, {}))
    ]
    for key in ("instructions", "guardrails"):
        if old.get(key) != new.get(key):
            changes.append(f"agent {key} changed")
    if old.get("actions") != new.get("actions"):
        changes.append("actions changed")
    return changes
