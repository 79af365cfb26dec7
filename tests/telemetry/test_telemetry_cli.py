"""The real `queryloop -p`, configured by the standard OTEL_* variables, sends its spans to a
local OTLP/HTTP receiver before it exits, continuing the trace its parent passed in
TRACEPARENT; a retry is an event of its request's span."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from otlp_receiver import OtlpReceiver, running_receiver

from queryloop.testing import MessagesServer, rate_limited, text, tool_use, turn

COMMAND = [sys.executable, "-m", "queryloop.cli.main"]
PARENT_TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT_SPAN = "b7ad6b7169203331"


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    with running_receiver() as found:
        yield found


def env_for(base_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OTEL_"))}
    env.pop("TRACEPARENT", None)
    env.update(
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
        QUERYLOOP_HOME=str(tmp_path / "home"),
    )
    env.update(extra)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    return subprocess.run(
        [*COMMAND, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=90
    )


def test_print_mode_exports_its_spans_before_it_exits(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    script = [turn(tool_use("Bash", {"command": 'echo "TP=$TRACEPARENT"'})), turn(text("done"))]
    with MessagesServer(script) as server:
        server.inject(rate_limited(0.01))  # the first request is answered 429, then retried
        env = env_for(
            server.base_url,
            tmp_path,
            OTEL_TRACES_EXPORTER="otlp",
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url,
            OTEL_EXPORTER_OTLP_HEADERS="x-tenant=test-42",
            OTEL_SERVICE_NAME="ql-cli-test",
            TRACEPARENT=f"00-{PARENT_TRACE}-{PARENT_SPAN}-01",
        )
        args = ["-p", "run it", "--allowed-tools", "Bash", "--output-format", "json"]
        done = run(args, env, tmp_path / "proj")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "done"
    # No waiting: the command flushed before it exited, so everything is here already.
    ours = [s for s in receiver.spans if s.scope == "queryloop"]
    names = sorted(s.name for s in ours)
    assert names == [
        "chat claude-sonnet-5-5",
        "chat claude-sonnet-5-5",
        "execute_tool Bash",
        "invoke_agent queryloop",
    ]
    [turn_span] = receiver.named("invoke_agent")
    # The Anthropic SDK traces its own HTTP calls to the registered provider: each nests
    # under the request span it belongs to.
    chat_ids = {s.span_id for s in receiver.named("chat")}
    sdk = [s for s in receiver.spans if s.scope != "queryloop"]
    assert sdk and {s.parent_span_id for s in sdk} == chat_ids
    assert (turn_span.trace_id, turn_span.parent_span_id) == (PARENT_TRACE, PARENT_SPAN)
    assert turn_span.resource["service.name"] == "ql-cli-test"
    assert all(h.get("x-tenant") == "test-42" for h in receiver.headers)
    assert set(receiver.paths) == {"/v1/traces"}
    first, second = sorted(receiver.named("chat"), key=lambda s: s.start_ns)
    retries = [attrs for name, attrs in first.events if name == "queryloop.request.retry"]
    assert len(retries) == 1 and retries[0]["error.type"] == "RateLimitError"
    assert not second.events
    [bash] = receiver.named("execute_tool")
    assert bash.parent_span_id == turn_span.span_id
    transcript = next((tmp_path / "home" / "projects").rglob("*.jsonl")).read_text()
    assert f"TP=00-{PARENT_TRACE}-{bash.span_id}-" in transcript


def test_without_otel_variables_nothing_is_set_up(tmp_path: Path) -> None:
    code = (
        "import sys; from queryloop.cli.main import start_tracing; "
        "print(start_tracing(), 'opentelemetry.sdk.trace' in sys.modules)"
    )
    env = env_for("http://127.0.0.1:9", tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.split() == ["None", "False"], done.stderr


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER='zipkin' is not supported"),
        (
            {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
            "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported",
        ),
    ],
)
def test_an_exporter_that_cannot_be_had_stops_the_command(
    tmp_path: Path, variables: dict[str, str], message: str
) -> None:
    done = run(["-p", "hi"], env_for("http://127.0.0.1:9", tmp_path, **variables), tmp_path / "p")
    assert done.returncode != 0
    assert message in done.stderr
