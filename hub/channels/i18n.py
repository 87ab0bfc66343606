"""Every word the outside surfaces (email, Telegram, link pages) show, in English and
Simplified Chinese, in one table.

Kept as one catalogue keyed by message id so that it can move into the web UI's gettext
catalogues as they appear without touching the renderers: ``text(language, key, **values)``
is the one call they make.
"""

from __future__ import annotations

from datetime import UTC, datetime

DEFAULT_LANGUAGE = "en"

_CATALOGUE: dict[str, dict[str, str]] = {
    "en": {
        "waiting_subject": "{agent} needs you: {title}",
        "waiting_intro": "{agent} is waiting for your answer.",
        "someone": "An agent",
        "why": "Why you are needed",
        "impact": "Impact",
        "what_you_can_do": "What you can do",
        "details": "Details",
        "task": "Task",
        "risk.low": "ℹ️ Low risk",
        "risk.medium": "⚠️ Medium risk",
        "risk.high": "⛔ High risk",
        "expires": "Answer before {when}.",
        "review_content": "What to review",
        "open_card": "Open the card on the web",
        "open_full": "The content is too long to show here: "
        "open it on the web to read it and answer.",
        "pick_several": "Pick {min} to {max} of:",
        "type_answer": "Type your answer",
        "answer": "Answer",
        "comment": "Comment (optional)",
        "submit": "Submit",
        "confirm": "Confirm",
        "confirm_title": "Confirm your answer",
        "confirm_choice": "You are about to answer: {label}",
        "outcome.resolved": "{outcome} — by {who} via {via}, {when}.",
        "outcome.expired": "This card expired; nothing was decided.",
        "outcome.cancelled": "This card was withdrawn: its task ended.",
        "outcome.answered": "answered",
        "answer_hidden": "an answer (hidden: sensitive)",
        "already_decided": "Already decided by {who} via {via}, {when}.",
        "via.web": "the web",
        "via.api": "the API",
        "via.email": "email",
        "via.telegram": "Telegram",
        "via.notebook": "a notebook",
        "failed_subject": "Task failed: {title}",
        "failed_body": "The task “{title}” by {agent} failed.",
        "failed_reason": "Reason: {error}",
        "open_task": "Open the task",
        "recorded": "Thank you — recorded: {outcome}.",
        "link_invalid": "This link is not valid: it may have been cut short or changed. "
        "Open the card from the hub instead.",
        "link_expired": "This link has expired. Open the card from the hub instead.",
        "link_used": "This link was used already.",
        "link_not_yours": "This link was sent to someone else, so it cannot answer for you.",
        "not_allowed_to_answer": "You can read this card but not answer it: viewers of a "
        "workspace do not decide. Ask an owner of the workspace to make you a member.",
        "invite_subject": "{inviter} invited you to {workspace} on LineUp Hub",
        "invite_body": "{inviter} invited you to join the workspace “{workspace}” as {role}.",
        "invite_open": "Accept the invitation",
        "invite_expires": "The invitation works once, until {when}.",
        "invite_ignore": "Not expecting this? Ignore this mail; nothing happens without you.",
        "role.owner": "an owner",
        "role.member": "a member",
        "role.viewer": "a viewer (can read, not answer)",
        "problem_title": "This link cannot be used",
        "fix_and_retry": "That answer does not fit: {problem}",
        "dev_outbox_title": "Outbox (emails written to files)",
        "dev_outbox_empty": "No emails yet.",
        "tg.confirm_high_risk": "⛔ High risk. Tap to confirm: {label}",
        "tg.confirm_yes": "✅ Yes: {label}",
        "tg.cancel": "↩️ Cancel",
        "tg.toggle_hint": "Tick the options, then Submit.",
        "tg.submit_count": "Submit ({count})",
        "tg.not_yours": "This card is for someone else.",
        "tg.card_gone": "This card is no longer here.",
        "tg.ticked": "Ticked: {count}",
        "tg.confirm_first": "Tap again to confirm.",
        "tg.cancelled": "Not answered.",
        "tg.reply_prompt": "Reply to this message with your answer.",
        "tg.comment_prompt": "Reply to this message with what should change.",
        "tg.retry_input": "That doesn't fit: {problem} Reply to this message again.",
        "tg.linked": "Linked. Cards from LineUp Hub will come to this chat.",
        "tg.link_invalid": "This link is invalid or expired: create a new one in Settings.",
        "tg.hello": "Hello! Link this chat from LineUp Hub: Settings → Telegram.",
        "tg.request_changes": "✏️ Request changes",
        "tg.answer_text": "✍️ Answer",
    },
    "zh-Hans": {
        "waiting_subject": "{agent} 需要你：{title}",
        "waiting_intro": "{agent} 正在等待你的回答。",
        "someone": "一个智能体",
        "why": "为什么需要你",
        "impact": "影响",
        "what_you_can_do": "你可以",
        "details": "详情",
        "task": "任务",
        "risk.low": "ℹ️ 低风险",
        "risk.medium": "⚠️ 中风险",
        "risk.high": "⛔ 高风险",
        "expires": "请在 {when} 前回答。",
        "review_content": "待审阅内容",
        "open_card": "在网页上打开卡片",
        "open_full": "内容太长，无法在此显示：请在网页上阅读并回答。",
        "pick_several": "从以下选项中选择 {min} 到 {max} 项：",
        "type_answer": "输入你的回答",
        "answer": "回答",
        "comment": "备注（可选）",
        "submit": "提交",
        "confirm": "确认",
        "confirm_title": "确认你的回答",
        "confirm_choice": "你将回答：{label}",
        "outcome.resolved": "{outcome} — 由 {who} 通过{via}决定，{when}。",
        "outcome.expired": "此卡片已过期，未作决定。",
        "outcome.cancelled": "此卡片已撤回：其任务已结束。",
        "outcome.answered": "已回答",
        "answer_hidden": "一个回答（敏感内容已隐藏）",
        "already_decided": "已由 {who} 通过{via}决定，{when}。",
        "via.web": "网页",
        "via.api": "API",
        "via.email": "邮件",
        "via.telegram": "Telegram",
        "via.notebook": "笔记本",
        "failed_subject": "任务失败：{title}",
        "failed_body": "{agent} 的任务“{title}”失败了。",
        "failed_reason": "原因：{error}",
        "open_task": "打开任务",
        "recorded": "谢谢——已记录：{outcome}。",
        "link_invalid": "此链接无效：可能被截断或修改。请从 LineUp Hub 打开卡片。",
        "link_expired": "此链接已过期。请从 LineUp Hub 打开卡片。",
        "link_used": "此链接已被使用。",
        "link_not_yours": "此链接是发给其他人的，不能代表你回答。",
        "not_allowed_to_answer": "你可以查看这张卡片，但不能回答：工作区的查看者不做决定。"
        "请让工作区的所有者把你设为成员。",
        "invite_subject": "{inviter} 邀请你加入 LineUp Hub 上的 {workspace}",
        "invite_body": "{inviter} 邀请你以{role}身份加入工作区“{workspace}”。",
        "invite_open": "接受邀请",
        "invite_expires": "此邀请只能使用一次，有效期至 {when}。",
        "invite_ignore": "没有预料到这封邮件？忽略即可；没有你的操作什么都不会发生。",
        "role.owner": "所有者",
        "role.member": "成员",
        "role.viewer": "查看者（可以查看，不能回答）",
        "problem_title": "此链接无法使用",
        "fix_and_retry": "这个回答不符合要求：{problem}",
        "dev_outbox_title": "发件箱（写入文件的邮件）",
        "dev_outbox_empty": "还没有邮件。",
        "tg.confirm_high_risk": "⛔ 高风险。点击确认：{label}",
        "tg.confirm_yes": "✅ 确认：{label}",
        "tg.cancel": "↩️ 取消",
        "tg.toggle_hint": "勾选选项，然后提交。",
        "tg.submit_count": "提交（{count}）",
        "tg.not_yours": "这张卡片是给其他人的。",
        "tg.card_gone": "这张卡片已不存在。",
        "tg.ticked": "已勾选：{count}",
        "tg.confirm_first": "请再点一次以确认。",
        "tg.cancelled": "未回答。",
        "tg.reply_prompt": "请回复此消息，写下你的回答。",
        "tg.comment_prompt": "请回复此消息，说明需要修改什么。",
        "tg.retry_input": "这个回答不符合要求：{problem} 请再次回复此消息。",
        "tg.linked": "已关联。LineUp Hub 的卡片将发送到这个聊天。",
        "tg.link_invalid": "此链接无效或已过期：请在设置中创建新的链接。",
        "tg.hello": "你好！请在 LineUp Hub 的 设置 → Telegram 中关联此聊天。",
        "tg.request_changes": "✏️ 要求修改",
        "tg.answer_text": "✍️ 回答",
    },
}

LANGUAGES = tuple(_CATALOGUE)


def text(language: str | None, key: str, **values: object) -> str:
    table = _CATALOGUE.get(language or DEFAULT_LANGUAGE, _CATALOGUE[DEFAULT_LANGUAGE])
    template = table.get(key) or _CATALOGUE[DEFAULT_LANGUAGE][key]
    return template.format(**values) if values else template


def when(moment: datetime | None) -> str:
    """Times in messages: UTC, to the minute, unambiguous in both languages."""
    if moment is None:
        return ""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "text", "when"]
