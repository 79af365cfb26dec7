"""`queryloop -p --json-schema SCHEMA` (Claude Code's flag): the value in the result object's
`structured_output`. One subprocess run end to end; the stream-json line, the exit status of
a run that never matched and the flag's checks run `main` in this process."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from cli_helpers import json_lines, project, run_cli

from queryloop.cli.args import UsageError, parse_args
from queryloop.cli.exit_codes import ExitCode
from queryloop.cli.main import main
from queryloop.testing import OUTPUT_TOOL, MessagesServer, structured_output, text, turn

SCHEMA = {
    "type": "object",
    "properties": {"color": {"type": "string"}, "legs": {"type": "integer"}},
    "required": ["color", "legs"],
}


def test_json_result_carries_the_structured_output(tmp_path: Path) -> None:
    script = [
        turn(text("Thinking."), structured_output({"color": "blue", "legs": "four"})),
        turn(structured_output({"color": "blue", "legs": 4})),
    ]
    with MessagesServer(script) as server:
        done = run_cli(
            server.base_url, tmp_path, "-p", "sky and cat", "--output-format", "json",
            "--json-schema", json.dumps(SCHEMA),
        )  # fmt: skip
        offered = {t["name"]: t["input_schema"] for t in server.requests[0]["tools"]}
        assert server.violations == [[], []]
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["structured_output"] == {"color": "blue", "legs": 4}
    assert result["subtype"] == "success" and result["is_error"] is False
    assert offered[OUTPUT_TOOL] == SCHEMA


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This process talks to the test server as the command would (home and key set)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("QUERYLOOP_HOME", str(tmp_path / "home"))
    return project(tmp_path)


def run_main(cwd: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["--cwd", str(cwd), "--json-schema", json.dumps(SCHEMA), *args], stdout=out)
    return code, out.getvalue()


def test_stream_json_ends_with_the_structured_output(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MessagesServer([turn(structured_output({"color": "red", "legs": 2}))]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code, out = run_main(served, "-p", "bird", "--output-format", "stream-json")
    last = json_lines(out)[-1]
    assert code == 0
    assert last["type"] == "result" and last["structured_output"] == {"color": "red", "legs": 2}


def test_no_match_after_the_attempts_is_exit_status_9(
    served: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MessagesServer([turn(text("no tool"))] * 10) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        code, out = run_main(served, "-p", "bird", "--output-format", "json")
    result = json.loads(out)
    assert code == ExitCode.STRUCTURED_OUTPUT and int(ExitCode.STRUCTURED_OUTPUT) == 10
    assert result["terminal_reason"] == "max_structured_output_retries"
    assert "structured_output" not in result


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-p", "x", "--json-schema", "{not json"], "not valid JSON"),
        (["-p", "x", "--json-schema", "[1]"], "must be a JSON object"),
        (["--json-schema", "{}", "hello"], "needs print mode"),
    ],
)
def test_a_bad_json_schema_flag_is_a_usage_error(args: list[str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        parse_args(args)


def test_a_schema_that_cannot_work_exits_2_before_any_request(
    served: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with MessagesServer([]) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        out = io.StringIO()
        bad = json.dumps({"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}})
        code = main(["--cwd", str(served), "-p", "x", "--json-schema", bad], stdout=out)
        assert server.requests == []
    assert code == ExitCode.USAGE
    assert "does not resolve" in capsys.readouterr().err
