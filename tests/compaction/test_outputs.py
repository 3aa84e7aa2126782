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
