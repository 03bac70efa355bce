"""The ports `agents` calls up through: after start-up every one is filled by `memory` or
`consent`, and each implementation takes the parameters its Protocol names, the same way."""
import inspect
import typing

import pytest

from agents import ports as ports_module
from agents.ports import Ports, ports

LISTS = ("memory_gates",)
MAPS = ("offline_handlers",)
DATA = {"notice_line": str}


def _protocol_of(name: str):
    hint = typing.get_type_hints(Ports)[name]
    if name in LISTS or name in MAPS:
        return typing.get_args(hint)[-1]
    return hint


def _shape(signature: inspect.Signature) -> list[tuple[str, inspect._ParameterKind]]:
    return [(p.name, p.kind) for p in signature.parameters.values()]


def _expected(protocol, member: str = "__call__") -> list[tuple[str, inspect._ParameterKind]]:
    return _shape(inspect.signature(getattr(protocol, member)))[1:]  # without self


def _implementations(name: str) -> list:
    value = getattr(ports, name)
    if name in LISTS:
        return list(value)
    if name in MAPS:
        return list(value.values())
    return [value]


SINGLE = [name for name in Ports.__dataclass_fields__ if name not in LISTS + MAPS + tuple(DATA)]


@pytest.mark.parametrize("name", SINGLE)
def test_every_port_is_filled_after_start_up(name):
    assert name in ports_module.filled(), f"no app filled the port {name}"


def test_the_gates_the_data_and_the_offline_tasks_are_filled():
    assert len(ports.memory_gates) == 2  # memory's stopped gate and consent's ask-first gate
    assert set(ports.offline_handlers) >= {"chat_reply", "builder_changes", "memory_operations"}
    for name, kind in DATA.items():
        assert name in ports_module.filled() and isinstance(getattr(ports, name), kind) and getattr(ports, name)


@pytest.mark.parametrize("name", [n for n in Ports.__dataclass_fields__ if n not in DATA])
def test_each_implementation_takes_the_parameters_its_protocol_names(name):
    protocol = _protocol_of(name)
    members = [m for m in protocol.__dict__ if callable(protocol.__dict__[m]) and (m == "__call__" or not m.startswith("_"))]
    assert members, f"{protocol.__name__} declares nothing to call"
    implementations = _implementations(name)
    assert implementations
    for implementation in implementations:
        for member in members:
            target = implementation if member == "__call__" else getattr(implementation, member)
            assert _shape(inspect.signature(target)) == _expected(protocol, member), (
                f"{name}: {getattr(target, '__qualname__', target)} does not match {protocol.__name__}.{member}"
            )


def test_a_drifted_signature_is_caught():
    """The comparison the test above makes tells a keyword from a positional parameter."""

    def drifted(agent, end_user, settings, source):  # the gate's parameters, but positional
        return None

    assert _shape(inspect.signature(drifted)) != _expected(ports_module.MemoryGate)


def test_a_port_is_filled_once():
    with pytest.raises(RuntimeError):
        ports_module.fill(memory_note=lambda conversation: "")
