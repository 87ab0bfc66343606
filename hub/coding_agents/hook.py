"""``python -I -S …/hook.py claude-code|codex [--wait S]``: the command the CLIs' hooks run.

``lineup connect`` writes this file's path into the CLI's hooks (``hook_command``). The
client itself is ``hub.coding_agents.hook_client``, imported from here rather than run:
Python compiles a file it runs at every start (2 ms of a 12 ms start-up here), and reads
a module it imports from its bytecode cache.
"""

import os
import sys

if not __package__:
    # Without site-packages (``-S``), whose start-up (the editable install's finder) was
    # most of the hook's time, the package is found from where this file is.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from hub.coding_agents.hook_client import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
