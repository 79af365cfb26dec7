"""The bwrap command line: which mounts, in which order (no bwrap needed)."""

from __future__ import annotations

from pathlib import Path

from queryloop.sandbox import SandboxPolicy, bwrap_argv, plan_mounts
from queryloop.sandbox.bwrap import NAMESPACE_FLAGS


def _pairs(argv: list[str]) -> list[tuple[str, str]]:
    """(option, destination) of every mount option, in order."""
    out: list[tuple[str, str]] = []
    for i, word in enumerate(argv):
        if word in ("--bind", "--ro-bind"):
            out.append((word, argv[i + 2]))
        elif word == "--tmpfs":
            out.append((word, argv[i + 1]))
    return out


def test_the_root_is_read_only_and_the_working_folder_writable_after_tmp(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    argv = bwrap_argv(
        "bwrap", plan_mounts(SandboxPolicy(), [project]), ["bash", "-c", "x"], cwd=project
    )
    assert argv[0] == "bwrap" and set(NAMESPACE_FLAGS) <= set(argv)
    assert argv[-6:] == ["--chdir", str(project), "--", "bash", "-c", "x"]
    mounts = _pairs(argv)
    assert mounts[0] == ("--ro-bind", "/")
    # the private /tmp comes before the project (under /tmp here), so the project shows
    assert mounts.index(("--tmpfs", "/tmp")) < mounts.index(("--bind", str(project.resolve())))


def test_deeper_paths_decide_and_denied_paths_are_hidden(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "home" / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    (home / ".ssh").mkdir()
    (home / "token").write_text("secret")
    policy = SandboxPolicy(
        read_only=(project / ".git" / "hooks", home / ".ssh" / "config"),
        deny_read=(home, home / "token"),
    )
    argv = bwrap_argv("bwrap", plan_mounts(policy, [project]), ["true"], cwd=project)
    mounts = _pairs(argv)
    hidden = mounts.index(("--tmpfs", str(home.resolve())))
    writable = mounts.index(("--bind", str(project.resolve())))
    hooks = mounts.index(("--ro-bind", str((project / ".git" / "hooks").resolve())))
    assert hidden < writable < hooks
    token = argv.index(str((home / "token").resolve()))
    assert argv[token - 2 : token] == ["--ro-bind", "/dev/null"]
    # a read-only path under a hidden folder is not mounted: it would show it again
    assert str((home / ".ssh" / "config").resolve()) not in argv


def test_a_missing_protected_path_gets_a_placeholder_only_where_writable(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    elsewhere = tmp_path / "elsewhere"
    policy = SandboxPolicy(
        read_only=(project / ".queryloop" / "settings.json", elsewhere / "x" / "settings.json")
    )
    plan = plan_mounts(policy, [project])
    assert plan.placeholders == ((project / ".queryloop").resolve(),)
    argv = bwrap_argv("bwrap", plan, ["true"], cwd=project)
    folder = str((project / ".queryloop").resolve())
    at = argv.index(folder)
    assert argv[at - 3 : at + 3] == ["--perms", "0555", "--tmpfs", folder, "--remount-ro", folder]


def test_missing_writable_folders_are_left_out(tmp_path: Path) -> None:
    plan = plan_mounts(SandboxPolicy(allow_write=(tmp_path / "nope",)), [tmp_path])
    assert [m.path for m in plan.mounts] == ["/tmp", str(tmp_path.resolve())]


def test_the_folders_above_a_protected_path_are_pinned(tmp_path: Path) -> None:
    """Each folder between the project and a protected path is a mount point (bound onto
    itself), so it cannot be renamed away and recreated."""
    project = tmp_path / "proj"
    (project / ".git" / "hooks").mkdir(parents=True)
    policy = SandboxPolicy(
        read_only=(project / ".git" / "hooks", project / ".queryloop" / "a.json")
    )
    mounts = _pairs(bwrap_argv("bwrap", plan_mounts(policy, [project]), ["true"], cwd=project))
    real = project.resolve()
    assert mounts.index(("--bind", str(real))) < mounts.index(("--bind", str(real / ".git")))
    assert mounts.index(("--bind", str(real / ".git"))) < mounts.index(
        ("--ro-bind", str(real / ".git" / "hooks"))
    )
    # the missing .queryloop gets a placeholder; its parent is the project itself
    assert ("--bind", str(real / ".queryloop")) not in mounts


def test_capabilities_are_dropped() -> None:
    argv = bwrap_argv("bwrap", plan_mounts(SandboxPolicy(), []), ["true"], cwd=Path("/"))
    at = argv.index("--cap-drop")
    assert argv[at + 1] == "ALL" and "--unshare-net" in argv and "--unshare-pid" in argv
