"""What runs on the machine of a person's coding agent (Claude Code, Codex): setting up its
hooks, and the hook client. Imports nothing heavy: the hook runs on every tool call.
"""
