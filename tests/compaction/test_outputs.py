"""What the ledger keeps of an output (compaction/outputs.py), on real shapes of output."""

from __future__ import annotations

from baton.compaction.outputs import config_values, error_excerpt, is_config, value_excerpt

PYTEST = """============ test session starts ==========
collected 4 items
tests/test_a.py ..F.
=================================== FAILURES ===================================
    def test_x():
>       assert add(None, 1) == 1
E       TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'
tests/test_a.py:5: TypeError
========================= 1 failed, 3 passed in 0.05s ==========================
[exit code 1]"""


def test_an_error_keeps_its_first_error_line_and_verdict() -> None:
    text = error_excerpt(PYTEST)
    assert text.startswith("E       TypeError: unsupported operand type(s) for +: 'NoneType'")
    assert text.endswith("1 failed, 3 passed in 0.05s")
    assert "[exit code 1]" not in text and "=====" not in text


def test_a_long_error_line_is_cut_from_its_start_so_the_message_survives() -> None:
    line = "  File " + "/very/deep/path/" * 30 + "mod.py, line 9 TypeError: 'NoneType' and 'int'"
    text = error_excerpt(line + "\n[exit code 1]")
    assert len(text) <= 400
    assert text.endswith("TypeError: 'NoneType' and 'int'")


def test_a_short_output_is_kept_whole_and_a_long_one_by_its_values() -> None:
    assert value_excerpt("Python 3.12.4\n[exit code 0]") == "Python 3.12.4"
    pip = "Name: requests\nVersion: 2.31.0\nSummary: HTTP\nHome-page: https://x\n" + (
        "Author: K\nLocation: /usr/lib\nRequires: idna\nRequired-by:\n[exit code 0]"
    )
    assert value_excerpt(pip) == "Version: 2.31.0"
    assert value_excerpt("a\nb\nc\nd\ne\nf\n[exit code 0]") is None  # nothing worth keeping


def test_config_values_by_section_and_nesting() -> None:
    toml = '     1\t[server]\n     2\tport = 8431\n     3\t# port = 1\n     4\t[db]\n     5\tname = "x"\n'
    assert config_values("conf/app.toml", toml) == ["[server] port = 8431", '[db] name = "x"']
    yaml = "database:\n  host: db.internal\n  port: 5432\nregion: eu-west-1\n"
    assert config_values("deploy.yaml", yaml) == [
        "database.host: db.internal",
        "database.port: 5432",
        "region: eu-west-1",
    ]
    settings = "DEBUG = False\ndef f():\n    x = 1\nTIMEOUT = 30\n"
    assert config_values("app/settings.py", settings) == ["DEBUG = False", "TIMEOUT = 30"]
    assert config_values("src/main.py", "PORT = 1\n") == []
    assert is_config(".env.local") and is_config("setup.cfg") and not is_config("README.md")


JEST = """ FAIL  tests/orders.test.js
  ● orders › total of an empty list

    expect(received).toBe(expected) // Object.is equality

    Expected: 50
    Received: 49

      at Object.<anonymous> (tests/orders.test.js:7:23)

Tests:       1 failed, 5 passed, 6 total
Time:        0.84 s
[exit code 1]"""

CARGO = """running 6 tests
test tests::total_of_empty ... FAILED

failures:

---- tests::total_of_empty stdout ----
thread 'tests::total_of_empty' panicked at src/orders.rs:40:9:
assertion `left == right` failed
  left: 49
 right: 50
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    tests::total_of_empty

test result: FAILED. 5 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
error: test failed, to rerun pass `--lib`
[exit code 101]"""


def test_a_failed_comparison_keeps_both_sides() -> None:
    jest = error_excerpt(JEST)
    assert "Expected: 50 / Received: 49" in jest
    assert jest.startswith("FAIL  tests/orders.test.js") and jest.endswith("Time:        0.84 s")
    cargo = error_excerpt(CARGO)
    assert "assertion `left == right` failed / left: 49 / right: 50" in cargo
    assert cargo.endswith("error: test failed, to rerun pass `--lib`")
    # jest's message under its FAIL line is kept as well as the FAIL line.
    first = error_excerpt(
        " FAIL  tests/a.test.js\n  ● a\n\n    TypeError: Cannot read properties of undefined\n"
        + "      at f (src/a.js:1:1)\n" * 5
        + "Tests:       1 failed, 1 total\nTime:        0.1 s"
    )
    assert first.startswith("FAIL  tests/a.test.js / … / TypeError: Cannot read properties")


def test_the_comparison_is_bounded() -> None:
    long_value = "{" + ", ".join(f"'k{i}': {i}" for i in range(200)) + "}"
    output = (
        " FAIL  tests/a.test.js\n"
        + "".join(f"    Expected: {long_value}\n    Received: {i}\n" for i in range(6))
        + "Tests:       1 failed, 1 total\n[exit code 1]"
    )
    text = error_excerpt(output)
    assert len(text) <= 400
    # At most 4 comparison lines (the fifth here is the last line but one, part of the tail).
    assert text.count("Expected: ") + text.count("Received: ") <= 5
    assert text.endswith("Tests:       1 failed, 1 total")  # the verdict stays
    assert all(len(part) <= 100 for part in text.split(" / "))
    # Within a smaller limit the comparison goes before the message or the verdict does.
    small = error_excerpt(output, 120)
    assert small.startswith("FAIL") and small.endswith("1 total") and len(small) <= 120
