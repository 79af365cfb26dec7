"""Background tasks end to end: Bash run_in_background, TaskOutput, TaskStop, notifications at
the next turn boundary, task events in the SDK stream, and the session stopping its tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from subagent_support import make_agent, result_text, tool_results

from queryloop.loop import Terminal
from queryloop.messages import AttachmentMessage
from queryloop.tasks import TaskEvent, TaskEventKind, TaskStatus
from queryloop.testing import MessagesServer, Turn, text, tool_use, turn


def alive(pid: int) -> bool:
    """True while `pid` runs (a killed process waiting to be reaped does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


async def test_background_bash_finishes_while_the_model_works_and_arrives_as_an_attachment(
    tmp_path: Path, home: Path
) -> None:
    flag = tmp_path / "go"

    def model(body: dict[str, Any]) -> Turn:
        done = len(tool_results(body))
        if done == 0:
            # Waits for a file the foreground command creates: it finishes during that command.
            command = f"while [ ! -e {flag} ]; do sleep 0.02; done; echo built ok"
            return turn(tool_use("Bash", {"command": command, "run_in_background": True}))
        if done == 1:
            assert "Command running in background with ID" in result_text(tool_results(body)[0])
            return turn(tool_use("Bash", {"command": f"touch {flag} && sleep 0.5 && echo other"}))
        return turn(text("all done"))

    with MessagesServer(model) as server:
        agent = make_agent(server, tmp_path, home, permission_mode="bypassPermissions")
        events = [e async for e in agent.stream("build in the background")]
        messages = agent.messages
        await agent.aclose()
    assert agent.last_terminal is not None and agent.last_terminal.reason is Terminal.COMPLETED
    notes = [
        m
        for m in messages
        if isinstance(m, AttachmentMessage) and m.attachment.type == "task_notification"
    ]
    assert len(notes) == 1 and notes[0].attachment.data["status"] == "completed"
    # The third request (after the foreground command) tells the model, as a system reminder.
    third = str(server.requests[2]["messages"][-1])
    assert "<task-notification>" in third and "completed (exit code 0)" in third
    assert "<task-notification>" not in str(server.requests[1]["messages"])
    kinds = [e.kind for e in events if isinstance(e, TaskEvent)]
    assert kinds == [TaskEventKind.STARTED, TaskEventKind.FINISHED]
    assert [v for v in server.violations if v] == []


async def test_task_output_waits_for_the_result_and_task_stop_kills_the_group(
    tmp_path: Path, home: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    ids: dict[str, str] = {}

    def model(body: dict[str, Any]) -> Turn:
        results = tool_results(body)
        if not results:
            return turn(
                tool_use("Bash", {"command": "sleep 0.2; echo quick", "run_in_background": True}),
                tool_use(
                    "Bash",
                    {
                        "command": f"sleep 300 & echo $! > {pid_file}; wait",
                        "run_in_background": True,
                    },
                ),
            )
        if len(results) == 2:
            for key, block in zip(("quick", "slow"), results, strict=True):
                ids[key] = result_text(block).split("ID: ")[1].split(".")[0]
            return turn(tool_use("TaskOutput", {"task_id": ids["quick"], "timeout": 10_000}))
        if len(results) == 3:
            assert "<status>completed</status>" in result_text(results[-1])
            assert "quick" in result_text(results[-1])
            return turn(tool_use("KillShell", {"shell_id": ids["slow"]}))  # the old name works
        return turn(text("stopped"))

    with MessagesServer(model) as server:
        agent = make_agent(server, tmp_path, home, permission_mode="bypassPermissions")
        result = await agent.run("go")
        tasks = agent.tasks
        assert tasks is not None
        slow = tasks.get(ids["slow"])
        await agent.aclose()
    assert result.text == "stopped"
    assert slow is not None and slow.status is TaskStatus.KILLED
    last = tool_results(server.requests[-1])[-1]
    assert "Successfully stopped task" in result_text(last)
    assert not alive(int(pid_file.read_text()))
    quick = tasks.get(ids["quick"])
    assert quick is not None and quick.notified  # read with TaskOutput: no notification


async def test_closing_the_session_stops_running_tasks_and_says_so(
    tmp_path: Path, home: Path
) -> None:
    script = [
        turn(tool_use("Bash", {"command": "sleep 300", "run_in_background": True})),
        turn(text("started")),
    ]
    notices: list[str] = []
    with MessagesServer(script) as server:
        agent = make_agent(
            server, tmp_path, home, permission_mode="bypassPermissions", on_notice=notices.append
        )
        await agent.run("start a server")
        tasks = agent.tasks
        assert tasks is not None and len(tasks.running()) == 1
        await agent.aclose()
    assert tasks.running() == []
    assert tasks.all()[0].status is TaskStatus.KILLED
    assert any("stopped 1 background task(s)" in n for n in notices)
