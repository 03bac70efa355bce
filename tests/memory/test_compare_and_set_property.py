"""No lost edit, as a property (issue 25): hypothesis drives random sequences of reads (a page
opened, a GET) and of writes made on one of them (Replace all, add line, edit, delete a line,
delete the memory) between writes that carry no version (the API without If-Match, a writer run),
and after every step checks that

- a write made on the version the memory reads now does exactly what it says;
- a write made on any other version is refused ("changed") and changes nothing, not even the
  audit trail; except add line, which appends whatever the memory reads (it overwrites nobody)
  and says whether the memory had changed since;
- a version names what the person saw: two reads of the same text have the same version.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import services as agent_services
from memory import guards as policy
from memory.models import Memory, MemoryRun
from memory.store import services
from memory.store.version import version_of

SLOTS = 3
line_text = st.sampled_from(["Prefers email over phone.", "Speaks Hindi.", "Works from the Pune office.", "Likes tea."])
slot = st.integers(min_value=0, max_value=SLOTS - 1)
index = st.integers(min_value=1, max_value=4)
step = st.one_of(
    st.tuples(st.just("read"), slot),
    st.tuples(st.just("read"), slot),
    st.tuples(st.just("unversioned_set"), st.lists(line_text, max_size=3)),
    st.tuples(st.just("replace"), slot, st.lists(line_text, max_size=3)),
    st.tuples(st.just("add"), slot, line_text),
    st.tuples(st.just("edit"), slot, index, line_text),
    st.tuples(st.just("delete_line"), slot, index),
    st.tuples(st.just("delete"), slot),
)


def current(end_user) -> tuple[list[str], str, int]:
    memory = Memory.objects.filter(end_user=end_user).first()
    runs = MemoryRun.objects.filter(memory=memory).count() if memory else 0
    return (memory.lines if memory else []), version_of(memory), runs


def versioned_write(end_user, action, made_on, args):
    """The write, and the lines it would leave (None: this write cannot apply, e.g. no such line)."""
    lines, _, _ = current(end_user)
    if action == "replace":
        services.memory_set(end_user=end_user, text="\n".join(args[0]), made_on=made_on)
        return args[0]
    if action == "delete":
        services.memory_delete(end_user=end_user, made_on=made_on)
        return []
    number, *rest = args
    was = lines[number - 1] if 1 <= number <= len(lines) else None
    if action == "edit":
        services.memory_line_edit(end_user=end_user, index=number, text=rest[0], was=was, made_on=made_on)
        return [*lines[: number - 1], rest[0], *lines[number:]]
    services.memory_line_delete(end_user=end_user, index=number, was=was, made_on=made_on)
    return [*lines[: number - 1], *lines[number:]]


@pytest.mark.django_db
@settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=1, max_size=25))
def test_a_write_made_on_an_old_version_never_changes_anything(agent, steps):
    end_user = agent_services.end_user_get_or_create(agent=agent, external_id=f"u_{Memory.objects.count()}")
    seen: dict[int, tuple[str, list[str]]] = {}
    for action, *args in steps:
        lines, version, runs = current(end_user)
        if action == "read":
            seen[args[0]] = (version, lines)
            continue
        if action == "unversioned_set":
            services.memory_set(end_user=end_user, text="\n".join(args[0]))
            assert current(end_user)[0] == args[0]
            continue
        made_on, seen_lines = seen.get(args[0], (version_of(None), []))
        fresh = made_on == version
        if fresh:
            assert seen_lines == lines  # one version, one text
        if action == "add":
            added = services.memory_line_add(end_user=end_user, text=args[1], made_on=made_on)
            assert current(end_user)[0] == [*lines, args[1]]
            assert added.number == len(lines) + 1 and added.changed_meanwhile is (not fresh)
            continue
        if action in ("edit", "delete_line") and not 1 <= args[1] <= len(lines):
            with pytest.raises(policy.MemoryRefused):
                versioned_write(end_user, action, made_on, args[1:])
            assert current(end_user) == (lines, version, runs)
            continue
        if fresh:
            expected = versioned_write(end_user, action, made_on, args[1:])
            assert current(end_user)[0] == expected
        else:
            with pytest.raises(policy.MemoryRefused) as refused:
                versioned_write(end_user, action, made_on, args[1:])
            assert refused.value.reason == "changed"
            assert current(end_user) == (lines, version, runs), "a write made on an old version changed something"
