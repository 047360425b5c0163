"""Reference sentences a fourth reading (tools 8 to 13 and the common parts, driven through a
real MCP client over stdio, HTTP and on PostgreSQL) found the tools did not yet keep, one test
each. A test of a tool's call runs on SQLite and on PostgreSQL (``store_kind``)."""

from __future__ import annotations

from tests.tools.helpers import body_lines, saved_id


# save_memory: "text (string, required): up to 20000 characters." and work_state_write:
# "items (array, required): strings, numbers, booleans or plain objects." A word repeated some
# hundred times (a to-do list of 700 {"task", "done": false} items, a log line) is such a
# text; on PostgreSQL its positions overflowed the term index's row (2704 bytes) and the save
# failed, where SQLite saved it.
def test_a_word_repeated_hundreds_of_times_is_saved_and_found(call):
    memory_id = saved_id(call("save_memory", text="word " * 4000))
    assert body_lines(call("search", query="word"))[0].startswith(f"#{memory_id} ")


def test_a_long_to_do_list_of_objects_is_written_and_read_back(call):
    items = [{"task": f"t{n}", "done": False} for n in range(1000)]
    result = call("work_state_write", list="todo", items=items)
    assert not result.is_error, result.text
    assert result.text.startswith('Saved list "todo" with 1000 item(s) as #')
    assert call("work_state_read", list="todo").structured["items"] == items


def test_a_fact_repeating_one_word_is_saved_and_found(call):
    fact = {"subject": "log", "predicate": "line", "object": "a " * 999}
    saved_id(call("save_memory", text="a log line", facts=[fact]))
    assert "fact #1 log · line = a a a" in call("fact_history", subject="log").text


# work_state_read: "list (string, required) and project (string, default as above)", that is
# "default is the working directory's project, else default", as work_state_write's schema says.
def test_work_state_read_project_default_reads_as_work_state_write_s():
    from aletheia_mem.tools.registry import TOOLS_BY_NAME

    def project(name):
        return TOOLS_BY_NAME[name].definition()["inputSchema"]["properties"]["project"]

    assert project("work_state_read")["description"] == project("work_state_write")["description"]
    assert project("work_state_read")["description"].endswith("else default.")


# save_memory: "text (string, required): up to 20000 characters." One token of several thousand
# bytes (a hex dump, a run of CJK text without punctuation) overflowed PostgreSQL's term index
# row; SQLite saved it. The memory is saved and found by that token on both stores.
def test_a_token_of_thousands_of_bytes_is_saved_and_found(call):
    import hashlib

    blob = "".join(hashlib.sha256(str(n).encode()).hexdigest() for n in range(80))  # 5120 hex
    cjk = "".join(chr(0x4E00 + (n * 7919) % 20000) for n in range(1200))  # 3600 bytes, one token
    first = saved_id(call("save_memory", text=f"dump {blob} end"))
    second = saved_id(call("save_memory", text=f"prose {cjk} end"))
    assert body_lines(call("search", query=blob))[0].startswith(f"#{first} ")
    assert body_lines(call("search", query=cjk))[0].startswith(f"#{second} ")
    assert body_lines(call("search", query=blob[:12]))[0].startswith(f"#{first} ")


# The same on a hub's PostgreSQL store an earlier release left: a long token it could store
# (one that compressed well) is rewritten as this version holds it, so search still finds it.
def test_a_long_token_an_older_postgresql_store_holds_is_found_after_the_upgrade(pg_url):
    import psycopg

    from aletheia_mem.storage.postgres.database import _steps
    from aletheia_mem.storage.postgres.full_text import stored_token
    from tests.storage.postgres.older_schema import migrate_before

    version = next(step for step, script in _steps() if "stored_token" in script)
    long_cjk, long_ascii = "日本" * 600, "ab" * 1500  # 3600 and 3000 bytes, both compressible
    with psycopg.connect(pg_url, autocommit=True) as conn:
        migrate_before(conn, version)
        for term in (long_cjk, long_ascii, "short"):
            conn.execute(
                "INSERT INTO memory_terms (term, memory_id, col, positions)"
                " VALUES (%s, 1, 1, '{0}')",
                (term,),
            )
    from aletheia_mem.storage.postgres.store import open_postgres_store

    open_postgres_store(pg_url).close()  # migrates
    with psycopg.connect(pg_url) as conn:
        held = {row[0] for row in conn.execute("SELECT term FROM memory_terms")}
    assert held == {stored_token(long_cjk), stored_token(long_ascii), "short"}
    assert stored_token(long_cjk) != long_cjk and stored_token("short") == "short"
