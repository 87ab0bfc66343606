"""A complete LineUp adapter: take tasks, ask before acting, report, finish.

python examples/minimal_agent.py http://127.0.0.1:8000 PAIRING-CODE   # first run
python examples/minimal_agent.py http://127.0.0.1:8000                # later runs
"""

import asyncio
import sys

from hub.sdk import Agent, Task

agent = Agent(sys.argv[1], pairing_code=(sys.argv[2:] or [None])[0], name="Minimal agent")


@agent.on_task
async def work(task: Task) -> None:
    await task.accept()
    await task.progress(30, "Looking at the request")
    answer = await task.request_approval(
        f"Go ahead with “{task.title}”?", impact="Changes files in the project.", risk="medium"
    )
    if not answer.approved:
        await task.report("cancelled", summary=f"Stopped: {answer.responded_by} said no.")
        return
    await task.progress(80, "Working on it")
    await task.add_artifact("result.txt", "data:text/plain,done", summary="What was done")
    # Returning reports `succeeded`; raising reports `failed`.


asyncio.run(agent.run())
