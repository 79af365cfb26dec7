"""How a shell command line is read for the permission pipeline (`permissions.pipeline`).

`bash` is the front the rules and the pipeline read: what one command line runs
(`bash.analyze`), whether a Bash rule matches it (`bash.deny_verdict`,
`bash.allow_approves`) and the paths it names; `write_guard` (imported by name: it reads the
rules, which read `bash`) says which protected path a call writes (a file tool's file or a
command's write targets). Beneath them: the parse (`parse`), wrappers and nested shells
(`wrappers`, `unwrap`, `env`, `inline`, `programs`, `runs`), variables (`vars`), options
(`options`), git (`git`), sed (`sed`) and the write targets (`writes`, `writes_git`,
`writers`, `write_model`, `write_contents`), archives (`archives`), git's work-tree
rewrites (`git_trees`, `write_trees`) and hard links (`write_links`).

The rest of `permissions` imports these modules inside the functions that read a command:
the parser (tree-sitter, its Bash grammar) and the analysis load with the first Bash call
checked, not with the session (docs/benchmarks.md, start-up).
"""
