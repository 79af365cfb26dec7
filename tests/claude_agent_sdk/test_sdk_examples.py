"""The example programs in examples/claude_agent_sdk/ (written for the Claude Agent SDK,
the import changed to queryloop's) run as written, each in its own process, against the
local Messages API server: a scripted model that answers each prompt it is sent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from queryloop.testing import MessagesServer, Turn, text, tool_use, turn

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "claude_agent_sdk"
ECHO_SERVER = ROOT / "tests" / "mcp" / "servers" / "echo_server.py"

Answer = Turn | Callable[[dict[str, Any]], Turn]


def prompt_of(body: Mapping[str, Any]) -> tuple[str, int]:
    """The prompt this request answers (the first text of the last user message that has
    any, context and interruption notes aside), and how many responses the model already
    gave to it."""
    messages = body["messages"]
    for index in range(len(messages) - 1, -1, -1):
        content = messages[index]["content"]
        if messages[index]["role"] != "user" or isinstance(content, str):
            continue
        texts = [
            b["text"]
            for b in content
            if b["type"] == "text" and not b["text"].startswith(("<system-reminder>", "[Request"))
        ]
        if texts:
            done = sum(1 for m in messages[index + 1 :] if m["role"] == "assistant")
            return texts[0], done
    return "", 0


def answering(script: Mapping[str, Sequence[Answer]]) -> Callable[[dict[str, Any]], Turn]:
    """A model that gives each prompt its scripted responses in order ("UNSCRIPTED: ..."
    for a prompt the script does not know, so the test's output shows it)."""

    def model(body: dict[str, Any]) -> Turn:
        prompt, done = prompt_of(body)
        answers = script.get(prompt)
        if answers is None or done >= len(answers):
            return turn(text(f"UNSCRIPTED: {prompt!r} (response {done + 1})"))
        answer = answers[done]
        return answer(body) if callable(answer) else answer

    return model


def run_example(
    name: str, script: Mapping[str, Sequence[Answer]], cwd: Path, *args: str
) -> tuple[str, list[dict[str, Any]]]:
    """Run examples/claude_agent_sdk/<name> in `cwd`; its stdout and the request bodies."""
    with MessagesServer(answering(script)) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "test-key",
            "QUERYLOOP_HOME": str(cwd / ".home"),
        }
        env.pop("QUERYLOOP_MODEL", None)
        done = subprocess.run(
            [sys.executable, str(EXAMPLES / name), *args],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=240,
        )  # fmt: skip
        bodies = server.requests
        assert [v for v in server.violations if v] == []
    assert done.returncode == 0, done.stdout + done.stderr
    assert "UNSCRIPTED" not in done.stdout, done.stdout
    return done.stdout, bodies


def test_quick_start(tmp_path: Path) -> None:
    script = {
        "What is 2 + 2?": [turn(text("2 + 2 = 4"))],
        "What is Python?": [turn(text("Python is a programming language."))],
        "Create a file called hello.txt that says 'Hello, World!'": [
            turn(tool_use("Write", {"file_path": "hello.txt", "content": "Hello, World!"})),
            turn(text("Created hello.txt.")),
        ],
    }
    out, bodies = run_example("quick_start.py", script, tmp_path)
    assert "Claude: 2 + 2 = 4" in out and "Claude: Python is a programming language." in out
    assert "Claude: Created hello.txt." in out and "Cost: $" in out
    assert (tmp_path / "hello.txt").read_text() == "Hello, World!"
    assert "You explain things in one short sentence." in json.dumps(bodies[1]["system"])


def test_mcp_calculator(tmp_path: Path) -> None:
    calc = "mcp__calc__"
    script = {
        "List your tools": [turn(text("add, subtract, multiply, divide, sqrt and power."))],
        "Calculate 15 + 27": [
            turn(tool_use(calc + "add", {"a": 15, "b": 27})),
            turn(text("15 + 27 = 42.")),
        ],
        "What is 100 divided by 0?": [
            turn(tool_use(calc + "divide", {"a": 100, "b": 0})),
            turn(text("That cannot be done.")),
        ],
        "What is 2 raised to the power of 8?": [
            turn(tool_use(calc + "power", {"base": 2, "exponent": 8})),
            turn(text("256.")),
        ],
    }
    out, bodies = run_example("mcp_calculator.py", script, tmp_path)
    assert "Tool result: 15 + 27 = 42" in out and "Claude: 15 + 27 = 42." in out
    assert "Tool result: Error: division by zero" in out
    assert "Tool result: 2 ^ 8 = 256" in out
    tools = [t["name"] for t in bodies[0]["tools"]]
    assert [n for n in tools if n.startswith(calc)] == [
        calc + n for n in ("add", "subtract", "multiply", "divide", "sqrt", "power")
    ]


def knows_the_colour(body: dict[str, Any]) -> Turn:
    return turn(text("Hot pink!" if "hot pink" in json.dumps(body) else "I do not know."))


def test_hooks(tmp_path: Path) -> None:
    script: dict[str, Sequence[Answer]] = {
        "Run the bash command: ./foo.sh --help": [
            turn(tool_use("Bash", {"command": "./foo.sh --help"})),
            turn(text("The hook blocked it.")),
        ],
        "Run the bash command: echo 'Hello from hooks!'": [
            turn(tool_use("Bash", {"command": "echo 'Hello from hooks!' > said.txt"})),
            turn(text("Done.")),
        ],
        "What's my favorite color?": [knows_the_colour],
        "Run this command: echo 'error: disk almost full'": [
            turn(tool_use("Bash", {"command": "echo 'error: disk almost full'"})),
            turn(text("Noted.")),
        ],
        "Write 'test data' to important_config.txt": [
            turn(tool_use("Write", {"file_path": "important_config.txt", "content": "test"})),
            turn(text("Refused.")),
        ],
        "Write 'test data' to regular_file.txt": [
            turn(tool_use("Write", {"file_path": "regular_file.txt", "content": "test"})),
            turn(text("Written.")),
        ],
        "Run: echo 'CRITICAL ERROR: system failure'": [
            turn(tool_use("Bash", {"command": "echo 'CRITICAL ERROR: system failure'"})),
        ],
    }
    out, bodies = run_example("hooks.py", script, tmp_path, "all")
    assert "Hook: blocked './foo.sh --help'" in out
    assert (tmp_path / "said.txt").read_text() == "Hello from hooks!\n"
    assert "Claude: Hot pink!" in out
    assert "Hook: the command failed" in out
    assert "The command failed; try another approach." in json.dumps(bodies)
    assert "Hook: refused a write to important_config.txt" in out
    assert not (tmp_path / "important_config.txt").exists()
    assert (tmp_path / "regular_file.txt").read_text() == "test"
    assert "Hook: critical output, stopping" in out
    assert out.rstrip().endswith("Result: error_during_execution")


def test_tool_permission_callback(tmp_path: Path) -> None:
    prompt = "1. List the files here\n2. Create a hello world script at hello.py\n3. Run it"
    script = {
        prompt: [
            turn(tool_use("LS", {"path": "."})),
            turn(tool_use("Write", {"file_path": "hello.py", "content": "print('Hi!')\n"})),
            turn(tool_use("Bash", {"command": "python3 safe_output/hello.py"})),
            turn(tool_use("Bash", {"command": "sudo reboot"})),
            turn(text("All done.")),
        ]
    }
    out, bodies = run_example("tool_permission_callback.py", script, tmp_path)
    assert "redirecting hello.py to ./safe_output/hello.py" in out
    assert (tmp_path / "safe_output" / "hello.py").read_text() == "print('Hi!')\n"
    assert not (tmp_path / "hello.py").exists()
    assert "Hi!" in json.dumps(bodies[3]["messages"][-1])  # the script really ran
    assert "Dangerous command pattern: sudo" in json.dumps(bodies[4]["messages"][-1])
    assert "Claude: All done." in out and "Done in " in out
    assert "3 permission requests:" in out  # Write and two Bash calls; LS needs none


def test_streaming_mode(tmp_path: Path) -> None:
    count = "Count from 1 to 100 slowly, sleeping between numbers"
    script = {
        "What is 2+2?": [turn(text("4"))],
        "What's the capital of France?": [turn(text("Paris."))],
        "What's the population of that city?": [turn(text("About 2.1 million."))],
        "What is 2 + 2?": [turn(text("Four."))],
        "What is the square root of 144?": [turn(text("Twelve."))],
        "What is 10% of 80?": [turn(text("Eight."))],
        count: [turn(text("1, 2, 3"), tool_use("Bash", {"command": "sleep 30"}))],
        "Never mind, just tell me a quick joke": [turn(text("A quick joke."))],
        "List 5 programming languages and their main use cases": [
            turn(text("Python for data, JavaScript for the web, Go for services."))
        ],
        "Create a hello.txt file with a greeting": [
            turn(tool_use("Write", {"file_path": "hello.txt", "content": "Hi there"})),
            turn(text("Created.")),
        ],
        "Hello! I have two questions.": [turn(text("Go ahead."))],
        "What's the capital of Japan?": [turn(text("Tokyo."))],
        "Run a bash echo command that says 'Hello from bash!'": [
            turn(tool_use("Bash", {"command": "echo 'Hello from bash!'"})),
            turn(text("It printed the greeting.")),
        ],
        "Just say 'Hello!'": [turn(text("Hello!"))],
        "Run a bash sleep command for 5 seconds": [turn(text("No need to wait."))],
    }
    out, bodies = run_example("streaming_mode.py", script, tmp_path, "all")
    for line in ("Claude: 4", "Claude: Paris.", "Claude: About 2.1 million.", "Claude: Four.",
                 "Claude: Twelve.", "Claude: Eight.", "Claude: A quick joke.",
                 "Languages mentioned: Python, JavaScript", "Tools used: Write",
                 "Claude: Tokyo.", "Command: echo 'Hello from bash!'",
                 "Claude: Hello!", "Claude: No need to wait."):  # fmt: skip
        assert line in out, line
    assert "Interrupted turn ended: error_during_execution" in out
    assert (tmp_path / "hello.txt").read_text() == "Hi there"
    assert "Hello from bash!" in out  # the tool result
    second_turn = next(b for b in bodies if "population" in json.dumps(b["messages"]))
    assert "Paris." in json.dumps(second_turn["messages"])  # the conversation kept context


def test_agents(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("import os\nprint('hi')\n")
    script = {
        "Use the code-reviewer agent to review app.py": [
            turn(tool_use("Agent", {"description": "Review app.py", "prompt": "Review app.py",
                                    "subagent_type": "code-reviewer"})),
            turn(text("The reviewer found an unused import.")),
        ],
        "Review app.py": [
            turn(tool_use("Read", {"file_path": "app.py"})),
            turn(text("Finding: os is imported and never used.")),
        ],
        "Use the doc-writer agent to explain what AgentDefinition is for": [
            turn(tool_use("Agent", {"description": "Explain", "prompt": "Explain AgentDefinition",
                                    "subagent_type": "doc-writer"})),
            turn(text("It defines a subagent.")),
        ],
        "Explain AgentDefinition": [turn(text("AgentDefinition describes a subagent type."))],
        "Use the analyzer agent to find the Python files here": [
            turn(tool_use("Agent", {"description": "Find files", "prompt": "Find Python files",
                                    "subagent_type": "analyzer"})),
            turn(text("There is one: app.py.")),
        ],
        "Find Python files": [
            turn(tool_use("Glob", {"pattern": "**/*.py"})),
            turn(text("app.py")),
        ],
    }  # fmt: skip
    out, bodies = run_example("agents.py", script, tmp_path)
    assert "Claude: The reviewer found an unused import." in out
    assert "Claude: It defines a subagent." in out and "Claude: There is one: app.py." in out
    reviewer = [b for b in bodies if "You are a code reviewer." in json.dumps(b.get("system"))]
    assert {t["name"] for t in reviewer[0]["tools"]} == {"Read", "Grep"}
    assert "os is imported and never used" in json.dumps(bodies)  # its answer went back
    analyzer = [b for b in bodies if "You are a code analyzer." in json.dumps(b.get("system"))]
    assert {t["name"] for t in analyzer[0]["tools"]} == {"Read", "Grep", "Glob"}


def test_readme_examples(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    script = {
        "What is 2 + 2?": [turn(text("4"))],
        "Hello Claude": [turn(text("Hello! How can I help?"))],
        "Tell me a joke": [turn(text("A short joke."))],
        "Create a hello.py file": [
            turn(tool_use("Write", {"file_path": "hello.py", "content": "print('hello')\n"})),
            turn(text("Created hello.py.")),
        ],
        "Where am I?": [turn(text("In the project folder."))],
        "Greet Alice": [
            turn(tool_use("mcp__tools__greet", {"name": "Alice"})),
            turn(text("I greeted Alice.")),
        ],
        "Run the bash command: ./foo.sh --help": [
            turn(tool_use("Bash", {"command": "./foo.sh --help"})),
            turn(text("Blocked.")),
        ],
        "Run the bash command: echo 'Hello from hooks example!'": [
            turn(tool_use("Bash", {"command": "echo 'Hello from hooks example!'"})),
            turn(text("Printed.")),
        ],
        "Hello": [turn(tool_use("Read", {"file_path": "hello.py"}))],
    }
    out, bodies = run_example("readme_examples.py", script, tmp_path, str(ECHO_SERVER))
    assert "Hello! How can I help?" in out
    assert (tmp_path / "hello.py").read_text() == "print('hello')\n"
    where = next(b for b in bodies if "Where am I?" in json.dumps(b["messages"]))
    assert str(tmp_path / "project") in json.dumps(where["system"])
    assert "Hello, Alice!" in out  # the in-process tool's result
    assert "MCP servers: ['external', 'internal']" in out
    assert "Command contains invalid pattern: foo.sh" in out
    assert "Run failed: e.subtype='error_max_turns'" in out


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_imports_only_queryloop(name: str) -> None:
    source = (EXAMPLES / name).read_text()
    assert "claude_agent_sdk" in source and "from claude_agent_sdk" not in source
    assert "import claude_agent_sdk" not in source
