"""What a person reads when the hub refuses something, in the language of their pages.

The core raises each ``HubError`` in English: that is the JSON API's contract, and what a
developer or an operator reads. A page shows the same error through this catalogue, keyed
by the error's stable ``code``: its sentences are gettext strings like every page's, so
they are translated where the pages are. English pages keep the core's own words, which
name the exact value at fault; a code the catalogue lacks shows them too, so a new error is
never hidden. The catalogue's placeholders are filled from the error's ``details`` and the
limits the core enforces.
"""

from __future__ import annotations

from typing import Any

from hub.core.agents.registry import MAX_NAME_LENGTH
from hub.core.agents.remote import MAX_SECRET_LENGTH
from hub.core.errors import HubError
from hub.core.notify.push_subscriptions import MAX_DEVICES
from hub.core.people.passwords import MIN_PASSWORD_LENGTH
from hub.core.work.conversations import MAX_AGENTS_PER_CONVERSATION, MAX_TITLE_LENGTH
from hub.core.work.messages import MAX_CONTENT_LENGTH
from hub.core.work.search import MAX_QUERY_LENGTH, MAX_WORDS
from hub.core.work.tasks import MAX_DESCRIPTION_LENGTH, MAX_REASON_LENGTH
from hub.i18n import DEFAULT_LANGUAGE, gettext, language_in_effect

LIMITS: dict[str, Any] = {
    "max_agent_name": MAX_NAME_LENGTH,
    "max_secret": MAX_SECRET_LENGTH,
    "max_devices": MAX_DEVICES,
    "min_password": MIN_PASSWORD_LENGTH,
    "max_agents": MAX_AGENTS_PER_CONVERSATION,
    "max_title": MAX_TITLE_LENGTH,
    "max_content": MAX_CONTENT_LENGTH,
    "max_description": MAX_DESCRIPTION_LENGTH,
    "max_reason": MAX_REASON_LENGTH,
    "max_search": MAX_QUERY_LENGTH,
    "max_search_words": MAX_WORDS,
}


def N_(message: str) -> str:
    """Marks a sentence for the catalogue; it is translated when shown."""
    return message


_NOT_FOUND = N_("Check the link: it may belong to another workspace or have been deleted.")
_RELOAD = N_("Reload the page to see how things stand now.")
_NEW_CODE = N_("Create a new pairing code on the Agents page, then pair again.")
_PUSH_AGAIN = N_("Turn push off and on again in this browser.")
_OWNER = N_("Ask an owner of the workspace.")

# code → (message, hint). A hint of None keeps the hint of the error's class (the entries
# named after the classes' own codes, at the top).
MESSAGES: dict[str, tuple[str, str | None]] = {
    # The classes' own codes, for an error raised without a code of its own.
    "internal_error": (
        N_("Something went wrong on the hub."),
        N_("Retry; if it happens again, report the diagnostic code."),
    ),
    "invalid_input": (
        N_("The hub cannot accept what was sent."),
        N_("Fix the fields and send it again."),
    ),
    "bad_cursor": (
        N_("That link to a page of the list no longer works."),
        N_("Open the list again from its first page."),
    ),
    "unknown_parameter": (
        N_("The address asks for something this list does not offer."),
        N_("Open the list from the menu and page it with its own links."),
    ),
    "bad_search_query": (
        N_("There is nothing to search for in that."),
        N_(
            "Search for one to %(max_search_words)s words of letters or digits, at most "
            "%(max_search)s characters: part of a title, a message, an agent's name or an id."
        ),
    ),
    "unauthorized": (N_("Sign in first."), N_("Sign in again.")),
    "forbidden": (
        N_("You may not do this here."),
        N_("Ask an owner of this workspace for access."),
    ),
    "not_found": (N_("This does not exist."), _NOT_FOUND),
    "conflict": (N_("This changed in the meantime."), _RELOAD),
    "not_allowed": (N_("Only the hub may do this."), _RELOAD),
    "illegal_transition": (
        N_("The task cannot move to that state from the one it is in."),
        N_("Reload the task to see its state now."),
    ),
    "already_decided": (
        N_("Someone answered this card already."),
        N_("Nothing to do: the card shows who answered, how and when."),
    ),
    "gone": (N_("This expired or was used already."), N_("Create a new one.")),
    "rate_limited": (N_("Too many attempts."), N_("Wait a minute before trying again.")),
    "payload_too_large": (N_("This is too large to send at once."), N_("Send less at once.")),
    "unavailable": (
        N_("The hub cannot reach its database right now."),
        N_("Retry in a few seconds."),
    ),
    # Accounts and sign-in.
    "bad_credentials": (N_("Wrong email or password."), N_("Check both and try again.")),
    "email_taken": (
        N_("An account for this email address exists already."),
        N_("Log in instead, or use another address."),
    ),
    "invalid_email": (N_("This is not an email address."), N_("Check the address.")),
    "weak_password": (N_("A password needs at least %(min_password)s characters."), None),
    "signup_closed": (
        N_("This hub does not take new accounts."),
        N_("Ask the hub's admin to create an account for you."),
    ),
    "invitation_required": (
        N_("This hub takes new accounts by invitation only."),
        N_("Ask a workspace owner for an invitation link, and sign up from it."),
    ),
    "account_disabled": (
        N_("This account is disabled."),
        N_("Ask the hub's admin to enable it again."),
    ),
    "admins_only": (N_("Only the hub's admin can manage accounts."), N_("Ask the hub's admin.")),
    "last_admin": (
        N_("This is the hub's only admin."),
        N_("Nobody could manage accounts after this; keep it enabled."),
    ),
    "wrong_password": (
        N_("The current password is not right; nothing was changed."),
        N_("Type the password you sign in with now."),
    ),
    "passwords_differ": (
        N_("The new password and its repetition differ; nothing was changed."),
        N_("Type the same new password twice."),
    ),
    "password_rate_limited": (
        N_("Too many wrong current passwords; try again in %(retryAfterS)s seconds."),
        N_("Wait a little, and check the current password before trying again."),
    ),
    "reset_link_invalid": (
        N_("This reset link is not valid: it expired, was used already, or was never made here."),
        N_("Ask for a new link on the sign-in page (Forgot your password?)."),
    ),
    "reset_rate_limited": (
        N_("Too many reset requests; try again in %(retryAfterS)s seconds."),
        N_("Check your mailbox (and its spam folder) for the mails already sent."),
    ),
    "reset_link_rate_limited": (
        N_("Too many reset links that do not work; try again in %(retryAfterS)s seconds."),
        N_("Open the link from the newest mail, or ask for a new one."),
    ),
    "bad_totp_code": (
        N_("That code is not right, or was used already."),
        N_("Type the 6 digits your authenticator app shows now, or one of your recovery codes."),
    ),
    "totp_required": (
        N_("This account signs in with a code as well."),
        N_("Type the code your authenticator app shows, or a recovery code."),
    ),
    "totp_already_on": (
        N_("Two-factor sign-in is on already."),
        N_("Turn it off first to use another authenticator."),
    ),
    "totp_secret_unreadable": (
        N_(
            "The hub cannot read this account's two-factor secret: its secret key changed "
            "since two-factor sign-in was set up."
        ),
        N_(
            "Sign in with one of your recovery codes, then turn two-factor sign-in off and "
            "on again in Settings."
        ),
    ),
    "invalid_totp_secret": (
        N_("That is not a two-factor secret this hub made."),
        N_("Start the setup again and use the secret it gives."),
    ),
    "totp_off_needs_proof": (
        N_("Turning two-factor sign-in off needs your password or a code."),
        N_("Type your password, a code from your authenticator app, or a recovery code."),
    ),
    "totp_already_off": (
        N_("Two-factor sign-in is off for this account already."),
        N_("Nothing to do: they sign in with their password."),
    ),
    "totp_rate_limited": (
        N_("Too many wrong codes; try again in %(retryAfterS)s seconds."),
        N_("Wait for the next code, and check the app's clock."),
    ),
    "login_rate_limited": (
        N_("Too many failed logins; try again in %(retryAfterS)s seconds."),
        N_("Wait a little, and check the email and password before trying again."),
    ),
    "token_rate_limited": (
        N_("Too many failed API tokens; try again in %(retryAfterS)s seconds."),
        N_("Wait a little, and check the token before trying again."),
    ),
    "pairing_rate_limited": (
        N_("Too many wrong pairing codes; try again in a minute."),
        N_("Copy the code again from the Agents page."),
    ),
    "not_signed_in": (N_("Sign in first."), N_("Sign in again.")),
    "invalid_token": (
        N_("This API token is unknown or revoked."),
        N_("Create a new token in Settings → API tokens."),
    ),
    "token_not_found": (N_("This API token is not active."), _NOT_FOUND),
    "user_not_found": (N_("There is no such account."), _NOT_FOUND),
    "cross_site_request": (
        N_("This request came from another site."),
        N_("Use the hub's own pages."),
    ),
    # Workspaces, members and invitations.
    "workspace_not_found": (N_("This workspace does not exist."), _NOT_FOUND),
    "read_only_member": (
        N_("Viewers of a workspace can look but not act."),
        N_("Ask an owner of the workspace to make you a member."),
    ),
    "owners_only": (N_("Only owners of a workspace may do this."), _OWNER),
    "member_not_found": (N_("This person is not a member of this workspace."), _RELOAD),
    "already_member": (
        N_("You are a member of this workspace already."),
        N_("Open the workspace from the hub; an owner can change your role."),
    ),
    "last_owner": (
        N_("The last owner of a workspace cannot leave it or stop being an owner."),
        N_("Make another member an owner first."),
    ),
    "invalid_role": (N_("This is not a role."), N_("Pick owner, member or viewer.")),
    "invitation_not_found": (N_("This invitation does not exist."), _NOT_FOUND),
    "invitation_closed": (
        N_("This invitation was accepted or revoked already."),
        N_("Reload the Members page to see who joined."),
    ),
    "invitation_invalid": (
        N_("This invitation is not valid any more: it was used, revoked or has expired."),
        N_("Ask an owner of the workspace for a new invitation."),
    ),
    "invitation_for_another": (
        N_("This invitation was sent to another email address."),
        N_("Sign in or sign up with that address, or ask for a new invitation."),
    ),
    # Agents, pairing and remote agents.
    "agent_not_found": (N_("This agent does not exist in this workspace."), _NOT_FOUND),
    "agent_revoked": (
        N_("This agent was revoked and takes no more work."),
        N_("Pick another agent, or pair this one again with a new code."),
    ),
    "credential_revoked": (
        N_("This agent's credential was revoked."),
        N_("Pair the agent again with a new code."),
    ),
    "invalid_credential": (
        N_("This agent credential is unknown."),
        N_("Pair the agent again with a new code."),
    ),
    "credential_required": (
        N_("This needs the agent's credential."),
        N_("Pair the agent again with a new code."),
    ),
    "agent_came_back": (N_("The agent is connected again."), _RELOAD),
    "already_online": (N_("The agent is online already."), _RELOAD),
    "connected_again": (N_("The agent connected again meanwhile."), _RELOAD),
    "already_revoked": (N_("The agent is revoked already."), _RELOAD),
    "not_online": (N_("The agent is not online."), _RELOAD),
    "invalid_agent_name": (
        N_("An agent's name must be 1 to %(max_agent_name)s characters."),
        N_("Pick a short name people will recognise, like “build-bot on laptop”."),
    ),
    "pairing_code_expired": (N_("This pairing code has expired."), _NEW_CODE),
    "pairing_code_used": (N_("This pairing code was used already."), _NEW_CODE),
    "pairing_code_unknown": (
        N_("No pairing code matches this one."),
        N_("Copy the code again (8 characters, like 7KQ2-M9XD) from the Agents page."),
    ),
    "a2a_disabled": (
        N_("Remote (A2A) agents are turned off on this hub."),
        N_("The hub's operator can turn them on."),
    ),
    "remote_agent_exists": (N_("This remote agent was added already."), _RELOAD),
    "remote_agent_not_found": (
        N_("There is no such remote agent in this workspace."),
        N_("Add the agent by its address first."),
    ),
    "invalid_remote_secret": (
        N_("The key is empty, spans several lines or is too long."),
        N_("Paste the key as its operator gave it: one line, at most %(max_secret)s characters."),
    ),
    "outbound_host_unknown": (
        N_("The hub cannot find this address."),
        N_("Check the address, or ask the hub's operator whether the hub may reach it."),
    ),
    # Conversations, messages and tasks.
    "conversation_not_found": (N_("This conversation does not exist."), _NOT_FOUND),
    "conversation_not_yours": (N_("This agent is not part of this conversation."), _RELOAD),
    "conversation_required": (N_("A message needs a conversation or a task."), _RELOAD),
    "agent_not_in_conversation": (
        N_("This agent is not part of this conversation."),
        N_("Pick one of the conversation's agents, or start a conversation with this one."),
    ),
    "target_agent_required": (
        N_("Say which agent the message is for."),
        N_("Pick one of the conversation's agents."),
    ),
    "content_required": (N_("The message is empty."), N_("Write something first.")),
    "content_too_long": (
        N_("The message is longer than %(max_content)s characters."),
        N_("Send less at once, or attach the rest as a link."),
    ),
    "title_required": (N_("The title is empty."), N_("Give it a title.")),
    "title_too_long": (N_("The title is longer than %(max_title)s characters."), None),
    "too_many_agents": (
        N_("A conversation holds at most %(max_agents)s agents."),
        N_("Pick fewer agents."),
    ),
    "description_too_long": (
        N_("The description is longer than %(max_description)s characters."),
        None,
    ),
    "reason_too_long": (N_("The reason is longer than %(max_reason)s characters."), None),
    "nul_character": (
        N_("The text holds a NUL character (U+0000); no text here may."),
        N_("Remove it and send the text again."),
    ),
    "task_not_found": (N_("This task does not exist."), _NOT_FOUND),
    "task_not_yours": (N_("This task is assigned to another agent."), _RELOAD),
    "task_not_accepted": (N_("The agent has not accepted this task yet."), _RELOAD),
    "task_ended": (N_("This task has already ended."), N_("Nothing to cancel.")),
    "unknown_status": (N_("This is not a task status."), _RELOAD),
    "unknown_status_filter": (
        N_("This is not a task status or view."),
        N_("Pick one of the tabs above the list."),
    ),
    "artifact_not_found": (N_("This artifact does not exist."), _NOT_FOUND),
    "artifact_not_inline": (N_("This artifact has no content on the hub."), None),
    "artifact_unreadable": (N_("This artifact's content cannot be read."), None),
    "id_in_use": (N_("An id the agent sent is taken already."), None),
    "invalid_payload": (N_("What the agent sent is not valid."), None),
    # Cards and answers.
    "interaction_not_found": (N_("This card does not exist."), _NOT_FOUND),
    "interaction_expired": (
        N_("This card expired before it was answered."),
        N_("Ask the agent to send the request again if it is still needed."),
    ),
    "interaction_resolved": (N_("This card was answered already."), _RELOAD),
    "interaction_cancelled": (N_("The agent withdrew this card."), _RELOAD),
    "interaction_pending": (N_("This card is still waiting for an answer."), _RELOAD),
    "interaction_not_yours": (N_("This agent did not ask this card."), _RELOAD),
    "not_pending": (N_("This card is not waiting for an answer any more."), _RELOAD),
    "invalid_interaction": (N_("The card the agent sent is not valid."), None),
    "invalid_response": (
        N_("This answer does not fit the card."),
        N_("Check what the card asks for and answer again."),
    ),
    "invalid_via": (N_("This is not a place an answer can come from."), _RELOAD),
    "invalid_responder": (N_("This answer names no person."), _RELOAD),
    "invalid_action_edit": (
        N_("This change to the action is not allowed."),
        N_("Change only the fields the card lets you edit, keeping their kind of value."),
    ),
    "action_changed": (
        N_("The action changed since you saw it."),
        N_("Reload the card to see the action as it stands now, then decide again."),
    ),
    "invalid_batch": (
        N_("Some of these answers cannot be given."),
        N_("Reload the inbox and answer again."),
    ),
    "already_voted": (
        N_("You voted on this card already."),
        N_("Each approver votes once; the card shows the votes so far."),
    ),
    "quorum_not_reached": (
        N_("This card is decided by a quorum of votes."),
        N_("Vote on it; it resolves once enough approvers agree."),
    ),
    "decided_by_votes": (
        N_("This card was decided by its votes before it expired."),
        N_("Nothing to do: the card resolves with what its votes decided."),
    ),
    "not_a_quorum": (N_("This card takes one answer, not votes."), _RELOAD),
    "not_an_approver": (
        N_("This card needs an answer from the people its approval policy names."),
        N_("Ask one of them to answer it; a workspace owner can change the policy rules."),
    ),
    "no_escalation": (N_("This card has nobody to escalate to."), None),
    "escalated": (N_("This card was escalated already."), None),
    "reminded": (N_("A reminder for this card was sent already."), None),
    # Approval policies and rules.
    "rule_not_found": (N_("This policy rule does not exist."), _RELOAD),
    "invalid_rule": (
        N_("This rule is not valid."),
        N_("Check the risk, the card type and what the rule decides."),
    ),
    "invalid_policy": (N_("This policy is not valid."), N_("Check each of its fields.")),
    "too_many_rules": (
        N_("The workspace holds as many rules of this kind as it may."),
        N_("Delete rules that no longer apply, or join them with a wider pattern."),
    ),
    "unknown_approver": (
        N_("The policy names someone who cannot answer in this workspace."),
        N_("Name members of the workspace (not viewers) by email."),
    ),
    "expiry_approval_not_allowed": (
        N_("This workspace does not let cards of this risk approve themselves when they expire."),
        N_("Let a person decide, or allow it for this risk in the approval settings."),
    ),
    "rule_approves_on_expiry": (
        N_("A policy rule approves cards on expiry for a risk this would no longer allow."),
        N_("Delete that rule first."),
    ),
    "invalid_settings": (
        N_("These settings are not valid."),
        N_("Pick among low, medium and high risk."),
    ),
    # Notifications, push and linked accounts.
    "invalid_preferences": (N_("These notification settings are not valid."), _RELOAD),
    "unknown_surface": (N_("This is not a place notifications can go."), _RELOAD),
    "surface_not_set_up": (
        N_("This channel is not set up on this hub, so it cannot be turned on or off."),
        N_("The hub's operator sets it up; until then leave it out."),
    ),
    "unknown_language": (N_("This language is not offered."), N_("Pick one from the list.")),
    "unknown_timezone": (
        N_("This is not a time zone."),
        N_("Use a name such as Europe/Berlin or Asia/Shanghai."),
    ),
    "channel_not_linked": (N_("No account of this kind is linked."), _RELOAD),
    "link_token_invalid": (
        N_("This link is invalid, used or expired."),
        N_("Create a new link in Settings and open it within 15 minutes."),
    ),
    "telegram_not_configured": (
        N_("Telegram is not set up on this hub."),
        N_("The hub's operator sets it up, then restarts the hub."),
    ),
    "feishu_not_configured": (
        N_("Feishu is not set up on this hub."),
        N_("The hub's operator sets it up, then restarts the hub."),
    ),
    "slack_not_configured": (
        N_("Slack is not set up on this hub."),
        N_("The hub's operator sets it up, then restarts the hub."),
    ),
    "push_not_available": (
        N_("Push is not available on this hub."),
        N_("The hub's operator can install it."),
    ),
    "invalid_push_subscription": (
        N_("This browser's push subscription is not valid."),
        _PUSH_AGAIN,
    ),
    "too_many_devices": (
        N_("Push is on in %(max_devices)s browsers already."),
        N_("Turn it off in a browser you no longer use (Settings → Push)."),
    ),
    "push_subscription_not_found": (
        N_("This browser's push subscription does not exist any more."),
        _RELOAD,
    ),
    "subscription_not_found": (
        N_("This browser's push subscription does not exist any more."),
        _RELOAD,
    ),
    "push_subscription_gone": (
        N_("That browser's push service no longer knows it, so it was removed."),
        N_("Turn push on again in that browser."),
    ),
    "push_refused": (N_("The push service refused the notification."), _PUSH_AGAIN),
    "push_service_unavailable": (
        N_("The push service did not take the notification."),
        N_("Try again in a minute."),
    ),
    # Storage.
    "database_unavailable": (
        N_("The hub cannot reach its database right now; nothing was written."),
        N_("Retry in a few seconds."),
    ),
    "storage_full": (
        N_("The disk holding the hub's database is full; nothing was written."),
        N_("Ask the hub's operator to free disk space."),
    ),
    "storage_read_only": (
        N_("The hub's database cannot be written to; nothing was written."),
        N_("Ask the hub's operator to give the hub write access to its database."),
    ),
    "value_does_not_fit": (
        N_("A value sent does not fit where it goes."),
        N_("Check the lengths of the fields sent."),
    ),
}


def for_person(error: HubError) -> dict[str, str]:
    """The error as a page shows it: code, message and hint, in the language in effect."""
    english = {"code": error.code, "message": error.message, "hint": error.hint}
    if language_in_effect() == DEFAULT_LANGUAGE or error.code not in MESSAGES:
        return english
    message, hint = MESSAGES[error.code]
    if hint is None:
        hint = MESSAGES.get(type(error).code, (message, None))[1]
    values = {**LIMITS, **error.details}
    try:
        return {
            "code": error.code,
            "message": gettext(message) % values,
            "hint": gettext(hint) % values if hint else "",
        }
    except (KeyError, ValueError, TypeError):
        # A sentence whose value the error did not carry: the core's words, not a gap.
        return english


# The refusals the pages' scripts can meet from the JSON API (turning push on), which the
# scripts show in the page's language by code.
SCRIPT_CODES = (
    "invalid_push_subscription",
    "too_many_devices",
    "push_not_available",
    "not_signed_in",
    "read_only_member",
    "cross_site_request",
    "rate_limited",
)


def for_scripts() -> dict[str, str]:
    """code → the message a script shows for it; empty in English, where the JSON API's
    own message is the one to show."""
    if language_in_effect() == DEFAULT_LANGUAGE:
        return {}
    return {code: gettext(MESSAGES[code][0]) % LIMITS for code in SCRIPT_CODES}


def said(error: HubError) -> str:
    """The error in one line, for a notice shown after a redirect."""
    shown = for_person(error)
    return f"{shown['message']} ({shown['code']})"
