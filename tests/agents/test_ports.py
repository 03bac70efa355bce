"""The ports `agents` calls up through: after start-up every one is filled by `memory` or
`consent`, and each implementation has what its Protocol names: the same parameters (names and
kinds) for every method, and every data member. A drifted signature fails here, not in a chat."""

import inspect
import typing
from dataclasses import MISSING

import pytest

from agents import ports as ports_module
from agents.ports import Ports, ports

LISTS = ("memory_gates",)
MAPS = ("offline_handlers",)
DATA = {"notice_line": str, "error_codes": dict}
SINGLE = [name for name in Ports.__dataclass_fields__ if name not in (*LISTS, *MAPS, *DATA)]


def _protocol_of(name: str):
    hint = typing.get_type_hints(Ports)[name]
    return typing.get_args(hint)[-1] if name in (*LISTS, *MAPS) else hint


def _implementations(name: str) -> list:
    value = getattr(ports, name)
    if name in LISTS:
        return list(value)
    if name in MAPS:
        return list(value.values())
    return [value]


def _shape(signature: inspect.Signature) -> list[tuple[str, inspect._ParameterKind]]:
    return [(p.name, p.kind) for p in signature.parameters.values()]


def _methods(protocol) -> list[str]:
    return [m for m, value in vars(protocol).items() if callable(value) and (m == "__call__" or not m.startswith("_"))]


def _expected(protocol, method: str) -> list[tuple[str, inspect._ParameterKind]]:
    return _shape(inspect.signature(getattr(protocol, method)))[1:]  # without self


def mismatches(protocol, implementation) -> list[str]:
    """What `implementation` lacks or takes differently from `protocol`."""
    out = []
    for method in _methods(protocol):
        target = implementation if method == "__call__" else getattr(implementation, method, None)
        if target is None or not callable(target):
            out.append(f"no {method}")
        elif _shape(inspect.signature(target)) != _expected(protocol, method):
            out.append(
                f"{method}{inspect.signature(target)} is not {method}{inspect.signature(getattr(protocol, method))}"
            )
    for member, kind in typing.get_type_hints(protocol).items():
        value = getattr(implementation, member, None)
        if not isinstance(value, typing.get_origin(kind) or kind):
            out.append(f"{member} is {value!r}, not a {kind}")
    return out


@pytest.mark.parametrize("name", SINGLE + list(DATA))
def test_every_port_is_filled_after_start_up(name):
    assert name in ports_module.filled() or (name in DATA and getattr(ports, name)), f"no app filled the port {name}"


def test_the_gates_the_offline_tasks_and_the_error_codes_are_filled():
    assert len(ports.memory_gates) == 2  # consent's ask-first gate and memory's stopped gate
    assert set(ports.offline_handlers) == {"chat_reply", "builder_changes", "memory_operations"}
    assert {"memory_refused", "memory_stopped", "job_running", "job_not_found"} <= set(ports.error_codes)
    assert all(
        isinstance(status, int) and isinstance(text, str) and text for status, text in ports.error_codes.values()
    )
    assert isinstance(ports.notice_line, str) and ports.notice_line


@pytest.mark.parametrize("name", SINGLE + list(LISTS) + list(MAPS))
def test_each_implementation_has_what_its_protocol_names(name):
    protocol = _protocol_of(name)
    assert _methods(protocol), f"{protocol.__name__} declares nothing to call"
    implementations = _implementations(name)
    assert implementations
    for implementation in implementations:
        assert mismatches(protocol, implementation) == [], f"{name}: {implementation!r}"


@pytest.mark.parametrize("name", SINGLE)
def test_the_defaults_of_a_bare_agents_app_match_too(name):
    slot = Ports.__dataclass_fields__[name]
    value = slot.default if slot.default is not MISSING else slot.default_factory()
    assert mismatches(_protocol_of(name), value) == []


def test_a_drifted_signature_is_caught():
    def positional_gate(agent, end_user, settings, source):  # the gate's names, but positional
        return None

    def renamed_gate(*, agent, end_user, memory_settings, source):  # a keyword renamed
        return None

    assert mismatches(ports_module.MemoryGate, positional_gate) and mismatches(ports_module.MemoryGate, renamed_gate)

    class NoLimits:  # the schema's methods, but not its limits
        def default(self):
            return {}

        def validate(self, settings):
            return settings

        def describe_changes(self, old, new):
            return []

    assert any("QUIET_MINUTES_CHOICES" in m for m in mismatches(ports_module.MemorySettingsSchema, NoLimits()))


def test_a_port_is_filled_once():
    with pytest.raises(RuntimeError):
        ports_module.fill(memory_note=lambda conversation: "")
