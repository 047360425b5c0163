"""The Facts and Rules pages in a real Chromium, each action checked again through MCP."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from aletheia_mem.storage.sqlite import SqliteStore
from tests.e2e.http_server import RunningServer, server_env
from tests.web.browser import axe_violations, mcp_tool, memory_ids

pytestmark = pytest.mark.e2e

XSS = '<img src=x onerror="window.__xss=1">'


def record_facts(server: RunningServer) -> int:
    facts = [
        {
            "subject": "billing",
            "predicate": "database",
            "object": "MySQL 5.7",
            "valid_from": "2024-01-01",
        },
    ]
    mcp_tool(server.mcp_url, "save_memory", {"text": "Billing on MySQL", "facts": facts})
    facts = [
        {
            "subject": "billing",
            "predicate": "database",
            "object": "Postgres 16",
            "valid_from": "2025-06-01",
        },
        {"subject": "billing", "predicate": "owner" + XSS, "object": "team-pay" + XSS},
    ]
    saved = mcp_tool(server.mcp_url, "save_memory", {"text": "Billing moved", "facts": facts})
    return memory_ids(saved)[0]


def test_facts_show_each_predicate_history_as_bars_with_current_and_as_of_marked(
    server: RunningServer, page: Page
) -> None:
    record_facts(server)
    page.goto(server.url + "/facts")
    page.get_by_role("link", name="billing").first.click()
    track = page.locator("section.track", has=page.get_by_role("heading", name="database"))
    expect(track.locator("rect.bar")).to_have_count(2)
    expect(track.locator("rect.bar.current")).to_have_count(1)
    expect(track.locator("tr", has_text="Postgres 16")).to_contain_text("current")
    expect(track.locator("tr", has_text="MySQL 5.7")).to_contain_text("superseded")
    page.get_by_label("As of").fill("2024-12-01")
    page.get_by_role("button", name="Show").click()
    expect(track.locator("tr", has_text="MySQL 5.7")).to_contain_text("held on 2024-12-01")
    expect(track.locator("tr", has_text="Postgres 16")).not_to_contain_text("held on")
    expect(track.locator("line.asof-line")).to_have_count(1)
    by_tool = mcp_tool(
        server.mcp_url,
        "fact_history",
        {"subject": "billing", "predicate": "database", "as_of": "2024-12-01"},
    )
    assert "MySQL 5.7" in by_tool and "Postgres 16" not in by_tool
    assert page.evaluate("window.__xss") is None
    expect(page.locator("main")).to_contain_text("team-pay<img")
    assert axe_violations(page) == []


def test_the_as_of_date_is_offered_only_for_a_subjects_history(
    server: RunningServer, page: Page
) -> None:
    record_facts(server)
    page.goto(server.url + "/facts?as_of=2024-12-01")
    expect(page.get_by_role("heading", name="Current facts")).to_be_visible()
    expect(page.get_by_label("As of")).to_have_count(0)  # the current facts hold now
    expect(page.locator("main")).not_to_contain_text("As of")
    page.get_by_role("link", name="billing").first.click()
    expect(page.get_by_role("heading", name="History of “billing”")).to_be_visible()
    page.get_by_label("As of").fill("2024-12-01")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("main")).to_contain_text("The orange line is 2024-12-01")
    assert axe_violations(page) == []


def test_rules_add_confirm_and_disable_with_evidence_linked(
    server: RunningServer, page: Page
) -> None:
    evidence = memory_ids(
        mcp_tool(server.mcp_url, "save_memory", {"text": "Lockfile drift broke CI twice"})
    )[0]
    page.goto(server.url + "/rules")
    page.get_by_label("Rule", exact=True).fill("Commit the lockfile " + XSS)
    page.get_by_label("When").fill("changing dependencies")
    page.get_by_label("Scope", exact=True).select_option("project")
    page.get_by_label("Project or situation name").fill("shop")
    page.get_by_label("Evidence memories (ids)").fill(str(evidence))
    page.get_by_role("button", name="Add").click()
    expect(page.get_by_role("status")).to_have_text("Rule added.")
    row = page.locator("tr.rule", has_text="Commit the lockfile")
    expect(row).to_contain_text("project: shop")
    expect(row.get_by_role("link", name=f"memory #{evidence}")).to_have_attribute(
        "href", f"/memories/{evidence}"
    )
    listed = mcp_tool(server.mcp_url, "list_rules", {})
    assert "Commit the lockfile" in listed
    rule_id = row.get_attribute("data-rule")
    assert rule_id and rule_id in listed
    row.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_have_text("Rule confirmed.")
    page.locator("tr.rule", has_text="Commit the lockfile").get_by_role(
        "button", name="Disable"
    ).click()
    expect(page.get_by_role("status")).to_have_text("Rule disabled.")
    expect(page.locator("tr.rule", has_text="Commit the lockfile")).to_contain_text("disabled")
    assert "Commit the lockfile" not in mcp_tool(server.mcp_url, "list_rules", {})
    assert page.evaluate("window.__xss") is None
    assert axe_violations(page) == []


def test_a_rule_citing_a_dismissed_memory_is_flagged_for_re_check(
    server: RunningServer, page: Page
) -> None:
    evidence = memory_ids(
        mcp_tool(server.mcp_url, "save_memory", {"text": "Staging is on port 8081"})
    )[0]
    mcp_tool(
        server.mcp_url,
        "add_rule",
        {"then": "Test on staging port 8081", "evidence_memory_ids": [evidence]},
    )
    mcp_tool(server.mcp_url, "dismiss_memory", {"id": evidence, "reason": "moved"})
    page.goto(server.url + "/rules")
    expect(page.locator("tr.rule", has_text="staging port 8081")).to_contain_text("re-check")


def test_write_to_tools_previews_each_file_then_writes_only_the_marked_block(
    server: RunningServer, page: Page, root: Path
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Run the linter before committing"})
    claude = root / "shop" / "CLAUDE.md"
    claude.write_text("# Shop\n\nHand-written notes stay.\n", encoding="utf-8")
    page.goto(server.url + "/rules")
    page.get_by_role("link", name="Write to tools…").click()
    preview = page.locator("fieldset", has_text=str(claude))
    added = "+- Always: Run the linter before committing"
    expect(preview.locator("pre.diff")).to_contain_text(added)
    expect(preview.get_by_role("checkbox")).to_be_checked()
    expect(
        page.locator("fieldset", has_text=str(root / "home" / ".claude" / "CLAUDE.md"))
    ).to_be_visible()
    assert "aletheia" not in claude.read_text(encoding="utf-8")  # a preview writes nothing
    page.get_by_role("button", name="Write to tools").click()
    expect(page.get_by_role("status")).to_contain_text(str(claude))
    written = claude.read_text(encoding="utf-8")
    assert written.startswith("# Shop\n\nHand-written notes stay.\n")
    assert "<!-- aletheia:rules:start -->" in written
    assert "Run the linter before committing" in written
    assert not (root / "shop" / "GEMINI.md").exists()  # not chosen, not written
    expect(page.locator("fieldset", has_text=str(claude))).to_contain_text("Up to date.")
    assert axe_violations(page) == []


def test_the_rules_page_needs_the_csrf_token_for_every_write(server: RunningServer) -> None:
    reply = server.request(
        "POST",
        "/rules/add",
        "then=Injected+rule",
        {"Origin": server.url, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert reply.status == 403
    assert "Injected rule" not in mcp_tool(server.mcp_url, "list_rules", {})
    assert re.search(rb"security token", reply.body)


def start_session_in(root: Path, folder: Path) -> None:
    """The capture hook of a coding tool starting in ``folder``: it records the repository."""
    hook = str(Path(sys.executable).parent / "aletheia-hook")
    env = server_env(root / "data", folder, {"HOME": str(root / "home")})
    payload = json.dumps({"session_id": "s", "cwd": str(folder)})
    subprocess.run(
        [hook, "session-start"], input=payload, capture_output=True, text=True, env=env, timeout=10
    )


def repository_key(folder: Path) -> str:
    return "repo:" + hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]


def test_write_to_tools_offers_the_repositories_hosts_worked_in_and_nothing_outside_them(
    server: RunningServer, root: Path, page: Page
) -> None:
    mcp_tool(server.mcp_url, "add_rule", {"then": "Keep pull requests small"})
    other = root / "other"
    (other / ".git").mkdir(parents=True)
    (other / "src").mkdir()
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("not yours\n", encoding="utf-8")
    evil = root / "evil"
    (evil / ".git").mkdir(parents=True)
    (evil / "CLAUDE.md").symlink_to(outside / "secret.md")  # a link out of the repository
    start_session_in(root, other / "src")
    start_session_in(root, evil)
    swapped = root / "swapped"
    (swapped / ".git").mkdir(parents=True)
    start_session_in(root, swapped)
    (swapped / ".git").rmdir()
    swapped.rmdir()
    swapped.symlink_to(outside)  # recorded as a repository, now a link elsewhere
    store = SqliteStore(root / "data" / "aletheia.db")
    try:  # what any process of the user could write into the store
        for hostile in ("/", "relative", str(outside), str(other / ".." / "other")):
            store.repositories().remember(hostile, "evil", 1)
    finally:
        store.close()
    page.goto(server.url + "/rules/sync")
    place = page.locator("section.place", has=page.get_by_role("heading", name=str(other)))
    added = "+- Always: Keep pull requests small"
    expect(place.locator("fieldset", has_text=str(other / "CLAUDE.md"))).to_contain_text(added)
    expect(place.get_by_role("checkbox", name="Write this file (new file)")).to_have_count(6)
    expect(place.locator("input[type=checkbox]:checked")).to_have_count(2)  # AGENTS, CLAUDE
    refused = page.locator("section.place", has_text=str(evil))
    expect(refused).to_contain_text("Not offered:")
    expect(refused).to_contain_text("outside")
    expect(refused.get_by_role("checkbox")).to_have_count(0)
    headings = page.locator("section.place h2").all_inner_texts()
    assert not any(str(swapped) in h or str(outside) in h or "relative" in h for h in headings)
    assert not any(h.startswith("/ ") for h in headings)
    unrecorded = root / "unrecorded"
    (unrecorded / ".git").mkdir(parents=True)
    page.evaluate(  # a form edited to name a repository the store never recorded
        """key => { const input = document.createElement("input");
        input.type = "hidden"; input.name = "write:" + key; input.value = "1";
        document.querySelector("form[action='/rules/sync']").append(input); }""",
        repository_key(unrecorded) + ":claude-code",
    )
    page.get_by_role("button", name="Write to tools").click()
    expect(page.get_by_role("status")).to_contain_text(str(other / "CLAUDE.md"))
    assert "Keep pull requests small" in (other / "AGENTS.md").read_text(encoding="utf-8")
    assert not (unrecorded / "CLAUDE.md").exists()
    assert (outside / "secret.md").read_text(encoding="utf-8") == "not yours\n"
    assert sorted(os.listdir(outside)) == ["secret.md"]
    assert axe_violations(page) == []


def test_a_fact_that_starts_in_the_future_is_drawn_on_the_axis(
    server: RunningServer, page: Page
) -> None:
    facts = [
        {"subject": "pricing", "predicate": "plan", "object": "v1", "valid_from": "2024-01-01"},
        {"subject": "pricing", "predicate": "launch", "object": "v2", "valid_from": "2999-01-01"},
    ]
    mcp_tool(server.mcp_url, "save_memory", {"text": "Pricing v2 launches later", "facts": facts})
    page.goto(server.url + "/facts?subject=pricing")
    expect(page.locator("rect.bar")).to_have_count(2)
    view_box = page.locator("svg.bars").first.get_attribute("viewBox") or ""
    view_width = float(view_box.split()[2])
    for bar in page.locator("rect.bar").all():
        x, width = float(bar.get_attribute("x") or "-1"), float(bar.get_attribute("width") or "0")
        assert x >= 0 and x + width <= view_width, (x, width, view_width)
    expect(page.locator("main")).to_contain_text("to 2999-01-01")
