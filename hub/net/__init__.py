"""Outbound network access: every call the hub makes to an address a person gave it."""

from hub.net.outbound import OutboundRefused, check_outbound_url, guarded_http_client

__all__ = ["OutboundRefused", "check_outbound_url", "guarded_http_client"]
