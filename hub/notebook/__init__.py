"""The notebook surface: a person's hub inside Jupyter.

``Hub`` is the person's client (JSON API and ``/ws/client`` with a personal API token,
standard library and the SDK only); ``Inbox`` shows their pending cards as widgets,
answerable by clicking (recorded ``via: notebook``) and updated live. In a cell::

    hub = await Hub.connect("http://127.0.0.1:8000", token=TOKEN)
    inbox = await hub.open_inbox()
    inbox                     # the cards; click to answer

The widgets need the ``notebook`` extra: ``pip install 'lineup-hub[notebook]'``.
"""

from hub.notebook.client import SURFACE, Hub, HubApiError
from hub.sdk.display import ArtifactInfo, InteractionInfo, TaskInfo

__all__ = ["SURFACE", "ArtifactInfo", "Hub", "HubApiError", "InteractionInfo", "TaskInfo"]
