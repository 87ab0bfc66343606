"""The client WebSocket, ``/ws/client?workspace=WS&after=SEQ[&epoch=E]``, for browsers and
notebooks: the workspace's events after SEQ in order, then live ones, each exactly once.

Authenticated like the JSON API (session cookie or bearer token; a cookie must come from the
hub's own origin) and only for members of the workspace. Frames are JSON text:

* ``client.welcome`` first: ``{epoch, lastSequence, after}`` — keep ``epoch`` with the last
  sequence you handled and send both back when you reconnect;
* every logged event as its LAP envelope (``sequence`` increases by one each time);
* ``system.resync_required`` ``{reason, epoch, lastSequence}`` when the sequence you sent
  cannot be continued (another epoch: the log was replaced, say restored from a backup; or
  a sequence beyond the log's end) or is not worth continuing (``far_behind``: more than
  ``REPLAY_WINDOW`` events behind, see below): reload your state, then the events after
  ``lastSequence`` follow on this same socket (a sequence beyond the end sent with the
  log's own epoch also gives the log a new epoch, ``hub.core.log.epochs``, named in the
  welcome: keep it);
* transient frames, which carry no sequence and are never replayed: ``message.delta``
  (text still streaming), and ``agent.online`` / ``agent.offline`` of an agent with no
  open work (``hub.core.agents.presence``: such a change is state, not history);
* ``error`` ``{code, message, hint}`` before the socket closes when it is refused.

A client that starts late (no ``after``, ``after=0`` in a workspace with a long history, a tab
asleep for a day) is not sent the whole history to rebuild what the JSON API gives in one
call: the pages and the notebook load the current state, then follow the log from its end.
A tool that wants every event anyway asks with ``replay=all`` (or pages ``/events``).

The client may also send the user-side frames of spec §10.1 (``message.create``,
``task.create``, ``interaction.respond``, ``task.cancel_requested``); each is answered with
``ack`` or ``error`` on this socket — see ``hub.web.client_commands``. They are read one at a
time, as fast as they are answered (``hub.host.websocket_limits``); a frame past
``MAX_FRAME_BYTES`` characters closes the socket with 1009.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses

from quart import Blueprint, Quart, websocket

from hub.core.errors import HubError, InvalidInput
from hub.core.log.bus import BusClosing
from hub.core.log.epochs import resume
from hub.core.people.accounts import require_membership
from hub.core.store.models import Membership, Workspace
from hub.core.store.storage_faults import storage_fault
from hub.core.work.sensitive_answers import people_feed
from hub.host.identity import Caller, caller_again, current_caller
from hub.host.lifecycle import SERVICE_RESTART
from hub.web.client_commands import frame, handle_frame

blueprint = Blueprint("client_socket", __name__)

# How often a quiet socket's caller is looked up again (a frame from the client always is).
RECHECK_S = 10.0

PATH = "/ws/client"

# Past this many events behind, a client is told to reload its state instead of replaying:
# what it would rebuild from them is one API call, and a 300k-event replay is minutes of a
# core and a browser tab's memory. Within it, a tab back from a short sleep just catches up.
REPLAY_WINDOW = 1000
FAR_BEHIND = "far_behind"
# ``replay=all``: the whole backlog, however long (a tool that keeps its own copy of the log).
REPLAY_ALL = "all"


def _sequence(raw: str | None) -> int:
    if raw is None or raw == "":
        return 0
    if not raw.isdigit():
        raise InvalidInput(
            f"'after' must be a sequence number (0 or more), not {raw!r}.",
            code="invalid_sequence",
        )
    return int(raw)


def _replay_all(raw: str | None) -> bool:
    if raw is None or raw == "":
        return False
    if raw != REPLAY_ALL:
        raise InvalidInput(
            f"'replay' can only be {REPLAY_ALL!r} (every event since 'after'), not {raw!r}.",
            code="invalid_replay",
            hint="Leave it out, or send replay=all for every event however far back.",
        )
    return True


@blueprint.websocket(PATH)
async def client_socket() -> None:
    workspace_id = websocket.args.get("workspace", "")
    try:
        caller = await current_caller()
        membership = await require_membership(caller.user, workspace_id)
        after = _sequence(websocket.args.get("after"))
        replay_all = _replay_all(websocket.args.get("replay"))
        workspace = await Workspace.get(id=workspace_id)
    except HubError as error:
        await websocket.accept()
        await websocket.send(frame("error", workspace_id, error.to_dict()))
        await websocket.close(error.close_code, error.code)
        return
    await websocket.accept()
    # Checked before the welcome: a cursor ahead of the log in its own epoch starts a new
    # epoch (hub.core.log.epochs), and the welcome names it.
    position = await resume(
        workspace, websocket.args.get("epoch"), after, client=f"user {caller.user.id}"
    )
    workspace = position.workspace
    last = int(workspace.last_sequence)
    if position.resync is None and not replay_all and last - after > REPLAY_WINDOW:
        position = dataclasses.replace(position, resync=FAR_BEHIND)
    await websocket.send(
        frame(
            "client.welcome",
            workspace.id,
            {"epoch": workspace.epoch, "lastSequence": last, "after": after},
        )
    )
    if position.resync is not None:
        await websocket.send(
            frame(
                "system.resync_required",
                workspace.id,
                {"reason": position.resync, "epoch": workspace.epoch, "lastSequence": last},
            )
        )
    after = position.replay_after
    jobs = {
        asyncio.create_task(_send_events(workspace.id, after)),
        asyncio.create_task(_answer_commands(caller, membership)),
    }
    try:
        done, _ = await asyncio.wait(jobs, return_when=asyncio.FIRST_COMPLETED)
        for job in done:
            job.result()
    except BusClosing:  # the hub is stopping: reconnect in a moment
        await websocket.close(SERVICE_RESTART, "service_restart")
    except HubError as error:  # the caller's token was revoked, or they left the workspace
        await websocket.send(frame("error", workspace.id, error.to_dict()))
        await websocket.close(error.close_code, error.code)
    finally:
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)


async def _send_events(workspace_id: str, after: int) -> None:
    async with people_feed(workspace_id, after) as feed:
        async for event in feed:
            await websocket.send(event.text())


async def _answer_commands(caller: Caller, membership: Membership) -> None:
    """Answer the client's frames one at a time, in the order sent (see client_commands).

    Before each, and every ``RECHECK_S`` when the client is quiet, the caller is looked up
    again: a revoked token or a membership that ended closes the socket (the ``HubError``
    raised here), instead of leaving it to read, and act, as if nothing had happened.
    """
    while True:
        raw: str | bytes | None = None
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(RECHECK_S):
                raw = await websocket.receive()
        try:
            caller = await caller_again()
            membership = await require_membership(caller.user, membership.workspace_id)
        except Exception as error:
            if isinstance(error, HubError) or storage_fault(error) is None:
                raise
            # The database is away: a frame meets that too and is told so; look again later.
        if raw is not None:
            await websocket.send(await handle_frame(raw, caller, membership))


def init_app(app: Quart) -> None:
    app.register_blueprint(blueprint)
