"""The Python adapter SDK: connect an agent to a LineUp hub over LAP/0.1.

Needs only ``hub.protocol``, pydantic and websockets, so it installs on an agent's machine
without the server. See docs/sdk.md for a complete adapter in twenty lines.
"""

from hub.protocol.actions import ProposedAction
from hub.sdk.agent import Agent
from hub.sdk.backoff import Backoff
from hub.sdk.dispatch import Downlink
from hub.sdk.errors import (
    ActionMismatch,
    AgentClosed,
    AuthenticationFailed,
    HubRefused,
    NotApproved,
    NotPaired,
    SdkError,
    TaskCancelled,
)
from hub.sdk.resolution import Resolution
from hub.sdk.state import AgentState, StateStore
from hub.sdk.task import MessageStream, Task

__all__ = [
    "ActionMismatch",
    "Agent",
    "AgentClosed",
    "AgentState",
    "AuthenticationFailed",
    "Backoff",
    "Downlink",
    "HubRefused",
    "MessageStream",
    "NotApproved",
    "NotPaired",
    "ProposedAction",
    "Resolution",
    "SdkError",
    "StateStore",
    "Task",
    "TaskCancelled",
]
