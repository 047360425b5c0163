"""Session summaries when one repository is worked on by several sessions and tools (DESIGN 4:
hooks create ``summary``): a summary saved once for two sessions (the same text: one memory),
a session resumed or going on turn by turn (OpenCode's session.idle, Cursor's stop) replacing
its own, and the user's dismissals. ``aletheia-hook``'s ``run`` in process, on a real store of
each kind, with a clock that stands still: two summaries are the same text only when their
sessions start and end in the same minutes.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.config import STORE_VARIABLE, Settings
from aletheia_mem.domain.context import build_context
from aletheia_mem.domain.dismissals import set_dismissed
from aletheia_mem.domain.episodes import episode_uid, record_request
from aletheia_mem.hooks.main import run
from aletheia_mem.storage.base import Memory, MemoryQuery
from aletheia_mem.storage.contracts import HubStore
from tests.conftest import FakeClock
from tests.hooks.test_hooks import hook as hook_process
from tests.hooks.test_hooks import memories_of, project_dir
from tests.stores import target_of

MINUTE = 60_000
# How each host ends a session (or a turn: OpenCode and Cursor sum up after every turn).
ENDS = {
    "claude-code": ("session-end", {"hook_event_name": "SessionEnd"}),
    "opencode": (None, {"hook_event_name": "session.idle"}),
    "cursor": (None, {"hook_event_name": "stop", "status": "completed"}),
}

Hook = Callable[..., str]


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The git work tree of project shop, and a data folder of the test's own."""
    folder = tmp_path / "code" / "shop"
    (folder / ".git").mkdir(parents=True)
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("ALETHEIA_EXCLUDE", raising=False)
    return folder


@pytest.fixture
def hook(store: HubStore, shop: Path, clock: FakeClock) -> Hook:
    """Run one hook call of ``tool`` in session ``session`` at the clock's time; its stdout."""

    def call(tool: str, event: str | None, session: str, **payload: Any) -> str:
        settings = Settings(
            store=target_of(store),
            store_variable=STORE_VARIABLE,
            data_dir=shop.parent.parent / "data",
            tool=tool,
            cwd=shop,
            api_key=None,
        )
        ids = {"conversation_id": session} if tool == "cursor" else {"session_id": session}
        stdin = io.StringIO(json.dumps({**ids, "cwd": str(shop), **payload}))
        stdout = io.StringIO()
        run(event, stdin, stdout, settings, clock)
        return stdout.getvalue()

    return call


def start(hook: Hook, tool: str, session: str) -> None:
    hook(tool, "session-start", session)


def ask(hook: Hook, tool: str, session: str, prompt: str) -> None:
    hook(tool, "user-prompt", session, prompt=prompt)


def edit(hook: Hook, tool: str, session: str, shop: Path, name: str) -> None:
    tool_input = {"file_path": str(shop / name), "old_string": "a", "new_string": "b"}
    hook(tool, "post-tool-use", session, tool_name="Edit", tool_input=tool_input)


def end(hook: Hook, tool: str, session: str) -> None:
    event, payload = ENDS[tool]
    hook(tool, event, session, **payload)


def live_summaries(store: HubStore) -> list[Memory]:
    """The summaries search and context may show (not dismissed), oldest first."""
    query = MemoryQuery(projects=("shop",), kind="summary", order="date_asc", limit=100)
    return sorted(store.search_memories(query, now=0), key=lambda memory: memory.id)


def all_summaries(store: HubStore) -> list[Memory]:
    """Every summary, dismissed ones too, oldest first."""
    query = MemoryQuery(projects=("shop",), kind="summary", order="date_asc", limit=100)
    shown = store.search_memories(query, now=0)
    hidden = store.search_memories(
        MemoryQuery(projects=("shop",), kind="summary", limit=100, dismissed=True), now=0
    )
    return sorted([*shown, *hidden], key=lambda memory: memory.id)


def context(store: HubStore, clock: FakeClock) -> str:
    return build_context(store, "shop", 20, now=clock())


def two_sessions_that_end_alike(hook: Hook, store: HubStore, tool: str, clock: FakeClock) -> Memory:
    """Sessions a and b of ``tool``, started and ended in the same minutes with the same request:
    one summary, saved once for both."""
    for session in ("a", "b"):
        start(hook, tool, session)
        ask(hook, tool, session, "run the tests")
    clock.advance(1_000)
    for session in ("a", "b"):
        end(hook, tool, session)
    [shared] = all_summaries(store)
    return shared


@pytest.mark.parametrize("tool", list(ENDS))
def test_a_session_going_on_leaves_the_summary_it_shares_with_another_session_visible(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str
) -> None:
    shared = two_sessions_that_end_alike(hook, store, tool, clock)
    clock.advance(10 * MINUTE)  # a is resumed (Claude Code) or goes on (OpenCode, Cursor)
    start(hook, tool, "a")
    ask(hook, tool, "a", "and fix the failure")
    clock.advance(2 * MINUTE)
    end(hook, tool, "a")
    [still, a_now] = live_summaries(store)
    assert still.id == shared.id  # b's summary is still b's
    assert a_now.text.endswith("Requests:\n- run the tests\n- and fix the failure")
    assert f"#{shared.id}" in context(store, clock)
    assert f"#{a_now.id}" in context(store, clock)

    clock.advance(10 * MINUTE)  # now b goes on too: nobody's summary is the shared one
    start(hook, tool, "b")
    ask(hook, tool, "b", "and the docs")
    clock.advance(MINUTE)
    end(hook, tool, "b")
    [a_still, b_now] = live_summaries(store)
    assert a_still.id == a_now.id
    assert b_now.text.endswith("Requests:\n- run the tests\n- and the docs")
    [hidden] = [m for m in all_summaries(store) if m.dismissed_at is not None]
    assert hidden.id == shared.id
    assert hidden.dismiss_reason == f"the session went on: #{b_now.id} sums it up"
    assert f"#{shared.id}" not in context(store, clock)


@pytest.mark.parametrize("tool", ["opencode", "cursor"])
def test_a_summary_the_same_as_one_another_session_replaced_is_shown(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str
) -> None:
    # Two sessions given the same request in the same minute; a goes on to a second turn and
    # replaces its first summary before b's first turn ends with the very same text.
    for session in ("a", "b"):
        start(hook, tool, session)
        ask(hook, tool, session, "run the tests")
    clock.advance(1_000)
    end(hook, tool, "a")
    [first] = all_summaries(store)
    clock.advance(1_000)
    ask(hook, tool, "a", "and fix the failure")
    clock.advance(1_000)
    end(hook, tool, "a")
    clock.advance(1_000)
    end(hook, tool, "b")
    [b_summary, a_summary] = live_summaries(store)
    assert b_summary.id == first.id  # saved once: the same text
    assert (b_summary.dismissed_at, b_summary.dismiss_reason) == (None, None)
    assert a_summary.text.endswith("- run the tests\n- and fix the failure")
    assert f"#{first.id}" in context(store, clock)


@pytest.mark.parametrize("tool", list(ENDS))
def test_a_summary_the_user_dismissed_stays_dismissed_with_their_reason(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str, shop: Path
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "try a silly idea")
    edit(hook, tool, "a", shop, "idea.py")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [summary] = live_summaries(store)
    dismissed_at = clock()
    set_dismissed(
        store,
        item_type="memory",
        item_id=summary.id,
        dismiss=True,
        reason="noise: an experiment",
        actor="cli",
        now=dismissed_at,
    )
    clock.advance(10 * MINUTE)  # resumed (Claude Code), or a next turn (OpenCode, Cursor)
    start(hook, tool, "a")
    ask(hook, tool, "a", "one more try")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    clock.advance(MINUTE)
    end(hook, tool, "a")  # a turn, or an end, that adds nothing
    assert live_summaries(store) == []
    [kept] = all_summaries(store)
    assert (kept.id, kept.dismissed_at) == (summary.id, dismissed_at)
    assert kept.dismiss_reason == "noise: an experiment"
    assert "Session: try a silly idea" not in context(store, clock)

    set_dismissed(  # the user brings it back: the session sums itself up again
        store,
        item_type="memory",
        item_id=summary.id,
        dismiss=False,
        reason=None,
        actor="cli",
        now=clock(),
    )
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [latest] = live_summaries(store)
    assert latest.text.endswith("- try a silly idea\n- one more try\nFiles changed: idea.py.")
    [old] = [m for m in all_summaries(store) if m.dismissed_at is not None]
    assert old.id == summary.id
    assert old.dismiss_reason == f"the session went on: #{latest.id} sums it up"


def test_a_users_dismissal_of_a_summary_its_session_replaced_makes_it_the_users(
    hook: Hook, store: HubStore, clock: FakeClock
) -> None:
    tool = "claude-code"
    start(hook, tool, "a")
    ask(hook, tool, "a", "fix the cart")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [first] = live_summaries(store)
    clock.advance(10 * MINUTE)
    start(hook, tool, "a")
    ask(hook, tool, "a", "and the tax")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [replaced] = [m for m in all_summaries(store) if m.dismissed_at is not None]
    assert replaced.id == first.id and replaced.dismiss_reason.startswith("the session went on")
    set_dismissed(  # the user hides it on purpose, with no reason
        store, item_type="memory", item_id=first.id, dismiss=True, reason=None, actor="cli",
        now=clock(),
    )  # fmt: skip
    [mine] = [m for m in all_summaries(store) if m.id == first.id]
    # no longer the session's: a session never brings back a summary the user dismissed
    assert (mine.dismissed_at, mine.dismiss_reason) == (replaced.dismissed_at, None)


@pytest.mark.parametrize("tool", list(ENDS))
def test_an_end_that_adds_nothing_in_the_same_minute_keeps_the_summary_shown(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "run the tests")
    clock.advance(1_000)
    end(hook, tool, "a")
    clock.advance(1_000)
    end(hook, tool, "a")  # Cursor's stop, then its sessionEnd: the same text, the same memory
    [summary] = all_summaries(store)
    assert summary.dismissed_at is None
    assert f"#{summary.id}" in context(store, clock)


def test_a_resumed_session_sums_up_its_requests_however_many_other_sessions_made_since(
    hook: Hook, store: HubStore, clock: FakeClock
) -> None:
    start(hook, "claude-code", "a")
    ask(hook, "claude-code", "a", "fix the cart")
    clock.advance(MINUTE)
    end(hook, "claude-code", "a")
    start(hook, "codex", "b")  # another tool in the same folder, a busy week
    for number in range(250):
        clock.advance(1_000)
        record_request(
            store,
            project="shop",
            tool="codex",
            session_id="b",
            prompt=f"step {number}",
            now=clock(),
        )
    clock.advance(MINUTE)
    start(hook, "claude-code", "a")
    ask(hook, "claude-code", "a", "and the tax")
    clock.advance(MINUTE)
    end(hook, "claude-code", "a")
    [summary] = live_summaries(store)
    assert summary.title == "Session: fix the cart"
    assert summary.text.endswith("Requests:\n- fix the cart\n- and the tax")


@pytest.mark.parametrize("tool", list(ENDS))
def test_an_end_that_adds_nothing_later_keeps_the_summary_and_its_time(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str, shop: Path
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "fix the cart")
    edit(hook, tool, "a", shop, "cart.py")
    clock.advance(5 * MINUTE)
    end(hook, tool, "a")
    [summary] = live_summaries(store)
    # Cursor's sessionEnd when the window is closed half an hour later; an OpenCode turn or a
    # resumed Claude Code session that asked nothing and changed no file.
    clock.advance(30 * MINUTE)
    start(hook, tool, "a")
    ask(hook, tool, "a", "<private>just looking</private>")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    assert all_summaries(store) == [summary]
    assert f"#{summary.id}" in context(store, clock)


@pytest.mark.parametrize("tool", list(ENDS))
def test_a_session_the_user_dismissed_makes_no_more_summaries(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str, shop: Path
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "try a silly idea")
    edit(hook, tool, "a", shop, "idea.py")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [summary] = live_summaries(store)
    episode = store.episode_id_by_uid(episode_uid(tool, "shop", "a", clock()))
    assert episode is not None
    set_dismissed(
        store,
        item_type="episode",
        item_id=episode,
        dismiss=True,
        reason="a dead end",
        actor="cli",
        now=clock(),
    )
    clock.advance(10 * MINUTE)
    start(hook, tool, "a")
    ask(hook, tool, "a", "one more try")  # hidden with the session's other requests
    edit(hook, tool, "a", shop, "idea_2.py")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    assert all_summaries(store) == [summary]  # not a summary of its files alone in its place
    assert "Session: 2 files changed" not in context(store, clock)


@pytest.mark.parametrize("tool", list(ENDS))
def test_the_summary_that_replaces_a_pinned_one_stays_pinned(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "migrate the cart to v2")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [summary] = live_summaries(store)
    store.set_pinned(summary.id, True, clock())
    clock.advance(10 * MINUTE)
    start(hook, tool, "a")
    ask(hook, tool, "a", "and its tests")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [latest] = live_summaries(store)
    assert latest.id != summary.id and latest.pinned
    pinned = context(store, clock).split("## Pinned\n", 1)[1].split("\n## ", 1)[0]
    assert f"#{latest.id}" in pinned


@pytest.mark.parametrize("tool", list(ENDS))
def test_a_replaced_summary_the_user_restored_stays_restored(
    hook: Hook, store: HubStore, clock: FakeClock, tool: str
) -> None:
    start(hook, tool, "a")
    ask(hook, tool, "a", "fix the cart")
    clock.advance(MINUTE)
    end(hook, tool, "a")
    [first] = live_summaries(store)
    for prompt in ("and the tax", "and the docs"):
        clock.advance(10 * MINUTE)
        start(hook, tool, "a")
        ask(hook, tool, "a", prompt)
        clock.advance(MINUTE)
        end(hook, tool, "a")
        if prompt == "and the tax":
            set_dismissed(  # the user wants the first one back
                store,
                item_type="memory",
                item_id=first.id,
                dismiss=False,
                reason=None,
                actor="cli",
                now=clock(),
            )
    [restored, latest] = live_summaries(store)
    assert restored.id == first.id
    assert latest.text.endswith("- fix the cart\n- and the tax\n- and the docs")
    assert len(all_summaries(store)) == 3  # the second one replaced by the third


def test_aletheia_dismiss_of_a_summary_outlasts_the_resumed_session(env: dict[str, str]) -> None:
    # Real aletheia-hook and aletheia processes, as Claude Code and the user run them.
    base = {"session_id": "s1", "cwd": project_dir(env)}
    hook_process(env, "session-start", base)
    hook_process(env, "user-prompt", {**base, "prompt": "try a silly idea"})
    hook_process(env, "session-end", base)
    [summary] = memories_of(env, "summary")
    aletheia = str(Path(sys.executable).parent / "aletheia")
    args = [aletheia, "dismiss", str(summary.id), "--reason", "noise: an experiment"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    hook_process(env, "session-start", base)  # claude --resume
    hook_process(env, "user-prompt", {**base, "prompt": "one more try"})
    hook_process(env, "session-end", base)
    assert memories_of(env, "summary") == []
    shown = subprocess.run(
        [aletheia, "show", str(summary.id)], capture_output=True, text=True, env=env, timeout=30
    )
    assert "noise: an experiment" in shown.stdout
