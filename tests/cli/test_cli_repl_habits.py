"""Claude Code users' habits in the REPL (issue 34, item 11), in one real terminal session:
`!command` runs in bash mode and its output goes with the next prompt; `/agents` and
`/permissions` say what loaded and from where; the `statusLine` command draws the status line
from the session's JSON; a `/model` that cannot work changes nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from cli_helpers import project, user_texts
from pty_support import ReplChild

from queryloop.testing import MessagesServer, text, turn

STATUS_SCRIPT = """
import json, sys
payload = json.load(sys.stdin)
with open(sys.argv[1], "a") as out:
    out.write(json.dumps(payload) + "\\n")
print("SL model=" + payload["model"]["id"] + " cwd=" + payload["cwd"].rsplit("/", 1)[-1])
print("a second line is not shown")
"""


def payloads(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_bash_mode_agents_permissions_status_line_and_a_failed_model_switch(
    tmp_path: Path,
) -> None:
    folder = project(tmp_path)
    (folder / ".claude" / "agents").mkdir(parents=True)
    (folder / ".claude" / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: helps\n---\nHelp.\n"
    )
    (folder / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./secret.txt)"]}})
    )
    script, seen = tmp_path / "status.py", tmp_path / "status-payloads"
    script.write_text(STATUS_SCRIPT)
    home = tmp_path / "home"
    home.mkdir()
    command = f'"{sys.executable}" "{script}" "{seen}"'
    (home / "settings.json").write_text(json.dumps({"statusLine": {"command": command}}))
    with MessagesServer([turn(text("first answer"))]) as server:
        repl = ReplChild(
            server.base_url, tmp_path, "xterm-256color",
            "--trust", "--allowed-tools", "Bash(git status:*)",
            cpr=True,  # prompt_toolkit draws the bottom toolbar only when it knows the height
        )  # fmt: skip
        try:
            repl.started()
            repl.sendline("!echo bang-out-$((40 + 2))")
            repl.expect("bang-out-42")  # bash ran it (the model was not asked)
            repl.expect_prompt()
            assert server.requests == []
            repl.sendline("/agents")
            for part in ("helper", "project", ".claude/agents/helper.md"):  # one line
                repl.expect_exact(part)
            repl.expect_prompt()
            repl.sendline("/permissions")
            for part in ("Bash(git status:*)", "command line", "Read(./secret.txt)"):
                repl.expect_exact(part)
            repl.expect_exact(str(folder / ".claude" / "settings.json"))
            repl.expect_prompt()
            repl.sendline("what did it print?")
            repl.expect("first answer")
            repl.expect_prompt()
            asked = "\n".join(user_texts(server.requests[0]))
            assert "<bash-input>echo bang-out-$((40 + 2))</bash-input>" in asked
            assert "<bash-stdout>bang-out-42\n</bash-stdout>" in asked
            assert "what did it print?" in asked
            repl.wait_until(lambda: bool(payloads(seen)))  # the statusLine command ran
            model = payloads(seen)[-1]["model"]["id"]
            repl.sendline("/model gpt5")
            repl.expect("/model failed")
            repl.expect_prompt()
            repl.sendline("/model")
            repl.expect(f"model: {model}")  # still the old one
            repl.expect_prompt()
            assert repl.exit() == 0
        finally:
            repl.close()
    shown = "".join(repl.transcript)
    assert "SL model=" in shown  # its first line was the status line (drawn as a diff)
    assert "Switched to gpt5" not in shown and "SL model=gpt5" not in shown
    assert "a second line is not shown" not in shown
    last = payloads(seen)[-1]
    assert last["model"]["id"] == model and last["cwd"] == str(folder)
    assert last["session_id"] and Path(last["transcript_path"]).is_file()
    assert last["workspace"]["current_dir"] == str(folder)
