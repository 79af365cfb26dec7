"""The offline demo: `python -m queryloop.demo` (or `./run demo`).

A scripted demo model (`script.py`) fixes the bug in a copy of `sample_project/`, driven by the
real `queryloop` command against a local `queryloop.testing.MessagesServer`.
"""
