"""Coding-agent CLIs (Codex, Claude Code) plugged into the hub through their hooks.

Each module here prepares one CLI's own configuration so that the CLI asks the hub before it
runs what it would have to ask about. Nothing is imported here: the hook client and the
``lineup connect`` command import only the module they need, and must stay quick to start.
"""
