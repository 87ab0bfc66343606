"""The ``lineup`` command.

Each subcommand is a small function taking parsed arguments; the ones that touch the
database open it (migrating first) for the duration of the command. Errors a person can
fix are printed as one line with the diagnostic code and the next step; the exit status is
2, or for ``serve`` failing to start the class of cause (``hub.host.startup_checks``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from hub.log_format import configure_logging

# The server's modules are imported where a command needs them: an agent's machine has the
# SDK's dependencies only, and `lineup agent ...` must run there (docs/sdk.md).
if TYPE_CHECKING:
    from hub.config import Settings

Command = Callable[[argparse.Namespace, "Settings"], Awaitable[int]]
_COMMANDS: dict[str, Command] = {}


def command(name: str) -> Callable[[Command], Command]:
    def register(function: Command) -> Command:
        _COMMANDS[name] = function
        return function

    return register


# Agent-side commands that read no setting: they run with the SDK's dependencies alone.
SdkCommand = Callable[[argparse.Namespace], Awaitable[int]]
_SDK_COMMANDS: dict[str, SdkCommand] = {}


def sdk_command(name: str) -> Callable[[SdkCommand], SdkCommand]:
    def register(function: SdkCommand) -> SdkCommand:
        _SDK_COMMANDS[name] = function
        return function

    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lineup", description="LineUp Hub: supervise the AI agents you already run."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version('lineup-hub')}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the hub")
    serve.add_argument("--host", help="interface to listen on (LINEUP_HOST)")
    serve.add_argument("--port", type=int, help="port to listen on (LINEUP_PORT)")
    serve.add_argument("--database-url", help="database URL (LINEUP_DATABASE_URL)")
    serve.set_defaults(command="serve")

    sub.add_parser("migrate", help="bring the database schema up to date").set_defaults(
        command="migrate"
    )
    sub.add_parser("config", help="print every setting as a Markdown table").set_defaults(
        command="config"
    )
    sub.add_parser(
        "restored",
        help="after restoring a database backup: start a new epoch of every workspace's log, "
        "so agents and browsers resync instead of skipping events",
    ).set_defaults(command="restored")

    backup_words = (
        "write the database, the secret key and the VAPID keys into one file, while the hub serves"
    )
    backup = sub.add_parser("backup", help=backup_words, description=backup_words)
    backup.add_argument("file", help="the archive to write (mode 0600: it holds keys)")
    backup.set_defaults(command="backup")
    restore_words = (
        "with the hub stopped, put a backup of this hub version back and start a new "
        "log epoch, so agents and browsers resync"
    )
    restore = sub.add_parser("restore", help=restore_words, description=restore_words)
    restore.add_argument("file", help="an archive `lineup backup` wrote")
    restore.set_defaults(command="restore")

    user = sub.add_parser("user", help="manage people").add_subparsers(dest="action", required=True)
    create_user = user.add_parser("create", help="create a person and a personal workspace")
    create_user.add_argument("email")
    create_user.add_argument(
        "--password-stdin", action="store_true", help="read the password from standard input"
    )
    create_user.add_argument("--display-name")
    create_user.set_defaults(command="user create")
    _user_operator_commands(user)

    token = sub.add_parser("token", help="personal API tokens").add_subparsers(
        dest="action", required=True
    )
    create_token = token.add_parser("create", help="print a new API token for a person")
    create_token.add_argument("email")
    create_token.add_argument("--name", default="cli")
    create_token.set_defaults(command="token create")
    list_tokens = token.add_parser(
        "list",
        help="print a person's working tokens as JSON lines, never their secrets "
        "(e.g. lineup token list you@example.com)",
    )
    list_tokens.add_argument("email")
    list_tokens.set_defaults(command="token list")
    revoke_token = token.add_parser(
        "revoke",
        help="revoke a token by its id; it stops working at once (e.g. lineup token revoke tok_…)",
    )
    revoke_token.add_argument("token_id")
    revoke_token.set_defaults(command="token revoke")

    push = sub.add_parser("push", help="Web Push").add_subparsers(dest="action", required=True)
    push.add_parser(
        "rotate-keys",
        help="make a new VAPID key pair; every browser then turns push on again",
    ).set_defaults(command="push rotate-keys")

    pair = sub.add_parser("pair", help="print a one-time pairing code for an agent")
    pair.add_argument("--workspace", required=True, help="workspace id (ws_…)")
    pair.set_defaults(command="pair")

    agent = sub.add_parser("agent", help="run an agent adapter").add_subparsers(
        dest="action", required=True
    )
    demo = agent.add_parser(
        "demo", help="run a simulated agent that works through tasks and asks for approvals"
    )
    _agent_connection_arguments(demo)
    demo.add_argument(
        "--pause", type=float, default=1.0, help="seconds between simulated steps (default 1)"
    )
    demo.set_defaults(command="agent demo")
    run = agent.add_parser(
        "exec", help="run a command only after a person approves it: exec ... -- COMMAND..."
    )
    _agent_connection_arguments(run)
    run.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- COMMAND...")
    run.set_defaults(command="agent exec")
    agents = sub.add_parser("agents", help="a workspace's agents, from the hub's machine")
    agents_sub = agents.add_subparsers(dest="action", required=True)
    listing = agents_sub.add_parser("list", help="print the workspace's agents as JSON lines")
    listing.add_argument("--workspace", required=True, help="workspace id (ws_…)")
    listing.set_defaults(command="agents list")
    confirm = agents_sub.add_parser("confirm", help="confirm a paired agent's name: binds it")
    confirm.add_argument("agent_id")
    confirm.add_argument("--workspace", required=True, help="workspace id (ws_…)")
    confirm.add_argument("--name", required=True, help="the name people will see")
    confirm.set_defaults(command="agents confirm")
    revoke = agents_sub.add_parser("revoke", help="revoke an agent's credential for good")
    revoke.add_argument("agent_id")
    revoke.add_argument("--workspace", required=True, help="workspace id (ws_…)")
    revoke.set_defaults(command="agents revoke")

    mcp = sub.add_parser("mcp", help="the hub's human-in-the-loop tools as an MCP server on stdio")
    _agent_connection_arguments(mcp)
    mcp.add_argument(
        "--wait",
        type=float,
        help="seconds an asking tool waits for a person before returning a pending handle "
        "(default LINEUP_MCP_WAIT_S, 120)",
    )
    mcp.add_argument(
        "--print-credential",
        action="store_true",
        help="pair (or reuse the stored credential), print it for MCP over HTTP, and exit",
    )
    mcp.set_defaults(command="mcp")

    for verb, words in (
        ("connect", "pair this machine's {name} with the hub and add the hub's hooks"),
        ("disconnect", "remove the hub's hooks from {name} (exactly the ones connect added)"),
    ):
        clis = sub.add_parser(verb, help=words.format(name="Claude Code or Codex"))
        clis_sub = clis.add_subparsers(dest="cli", required=True)
        for cli, name in (("claude-code", "Claude Code"), ("codex", "Codex")):
            one = clis_sub.add_parser(cli, help=words.format(name=name))
            if verb == "connect":
                one.add_argument("--hub", required=True, help="the hub's address")
                one.add_argument(
                    "--pair", metavar="CODE", help="one-time pairing code (not needed again)"
                )
                one.add_argument(
                    "--wait",
                    type=int,
                    default=900,
                    help="seconds a card waits for a person before it expires (default 900)",
                )
            else:
                one.add_argument(
                    "--forget",
                    action="store_true",
                    help="also delete the stored credential (other projects then need "
                    "`connect --pair` again)",
                )
            if cli == "claude-code":
                where = one.add_mutually_exclusive_group()
                where.add_argument(
                    "--project", metavar="DIR", help="the project (default: this directory)"
                )
                where.add_argument(
                    "--user", action="store_true", help="every project: ~/.claude/settings.json"
                )
            else:
                one.add_argument(
                    "--codex-home", metavar="DIR", help="default $CODEX_HOME, else ~/.codex"
                )
            one.set_defaults(command=verb)
    _describe_every_command(parser)
    return parser


# One example per command, shown by its --help (``lineup serve --help``).
_EXAMPLES = {
    "lineup": "lineup serve",
    "lineup serve": "LINEUP_DATABASE_URL=postgres://lineup:pw@db/lineup lineup serve --port 8001",
    "lineup migrate": "lineup migrate",
    "lineup config": "lineup config",
    "lineup restored": "lineup restored",
    "lineup user": "lineup user list",
    "lineup user create": "lineup user create ana@example.org --password-stdin < password.txt",
    "lineup user list": "lineup user list",
    "lineup user set-password": "lineup user set-password ana@example.org < password.txt",
    "lineup user two-factor-off": "lineup user two-factor-off ana@example.org",
    "lineup user disable": "lineup user disable ana@example.org",
    "lineup user enable": "lineup user enable ana@example.org",
    "lineup token": "lineup token create ana@example.org --name ci",
    "lineup token create": "lineup token create ana@example.org --name ci",
    "lineup token list": "lineup token list ana@example.org",
    "lineup token revoke": "lineup token revoke tok_01J...",
    "lineup backup": "lineup backup /backups/lineup-2026-12-01.tar.gz",
    "lineup restore": "lineup restore /backups/lineup-2026-12-01.tar.gz",
    "lineup push": "lineup push rotate-keys",
    "lineup push rotate-keys": "lineup push rotate-keys",
    "lineup pair": "lineup pair --workspace ws_01J...",
    "lineup agent": "lineup agent demo --hub http://127.0.0.1:8000 --pair ABCD-EFGH",
    "lineup agent demo": "lineup agent demo --hub http://127.0.0.1:8000 --pair ABCD-EFGH",
    "lineup agent exec": "lineup agent exec --hub http://127.0.0.1:8000 --pair ABCD-EFGH "
    "-- make deploy",
    "lineup agents": "lineup agents list --workspace ws_01J...",
    "lineup agents list": "lineup agents list --workspace ws_01J...",
    "lineup agents confirm": "lineup agents confirm agt_01J... --workspace ws_01J... "
    "--name Builder",
    "lineup agents revoke": "lineup agents revoke agt_01J... --workspace ws_01J...",
    "lineup mcp": "lineup mcp --hub http://127.0.0.1:8000 --pair ABCD-EFGH",
    "lineup connect": "lineup connect claude-code --hub http://127.0.0.1:8000 --pair ABCD-EFGH",
    "lineup connect claude-code": "lineup connect claude-code --hub http://127.0.0.1:8000 "
    "--pair ABCD-EFGH",
    "lineup connect codex": "lineup connect codex --hub http://127.0.0.1:8000 --pair ABCD-EFGH",
    "lineup disconnect": "lineup disconnect claude-code",
    "lineup disconnect claude-code": "lineup disconnect claude-code --forget",
    "lineup disconnect codex": "lineup disconnect codex",
}


def _describe_every_command(parser: argparse.ArgumentParser) -> None:
    """Give every command's --help what it does (its one-line help) and an example."""
    for one, words in _every_command(parser, parser.description or ""):
        if one.description is None:
            one.description = words[:1].upper() + words[1:] + "."
        one.epilog = f"example:\n  {_EXAMPLES[one.prog]}"
        one.formatter_class = argparse.RawDescriptionHelpFormatter


def _every_command(
    parser: argparse.ArgumentParser, words: str
) -> Iterator[tuple[argparse.ArgumentParser, str]]:
    yield parser, words
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, child in action.choices.items():
                yield from _every_command(child, helps.get(name, ""))


def _user_operator_commands(user: Any) -> None:
    """``lineup user list | set-password | two-factor-off | disable | enable``: the
    operator's hand on accounts, working on the configured database whether or not the hub
    is running."""
    user.add_parser(
        "list", help="print every account as JSON lines (admin, disabled or not)"
    ).set_defaults(command="user list")
    set_password = user.add_parser(
        "set-password",
        help="give a person a temporary password read from standard input; ends their sessions",
    )
    set_password.add_argument("email")
    set_password.set_defaults(command="user set-password")
    two_factor_off = user.add_parser(
        "two-factor-off",
        help="turn off a person's two-factor sign-in when they lost both their authenticator "
        "and their recovery codes; ends their sessions",
    )
    two_factor_off.add_argument("email")
    two_factor_off.set_defaults(command="user two-factor-off")
    for verb, words in (
        (
            "disable",
            "stop a person signing in; ends their sessions, and their API tokens stop working",
        ),
        ("enable", "let a disabled person sign in again (their API tokens work again)"),
    ):
        one = user.add_parser(verb, help=words)
        one.add_argument("email")
        one.set_defaults(command=f"user {verb}")


def _agent_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--hub", required=True, help="the hub's address, e.g. http://127.0.0.1:8000"
    )
    way_in = parser.add_mutually_exclusive_group()
    way_in.add_argument("--pair", metavar="CODE", help="one-time pairing code (first run only)")
    way_in.add_argument("--token", metavar="T", help="the agent credential, if you have one")
    parser.add_argument("--name", help="the name the agent proposes when pairing")
    parser.add_argument(
        "--state-dir",
        help="where the credential and position are kept (default ~/.config/lineup, "
        "or LINEUP_AGENT_HOME)",
    )


_AGENT_SIDE = frozenset({"mcp", "config"})


# The allocator `lineup serve` runs with. CPython's own allocator for small objects keeps the
# memory of a burst: after 2,000 agents reconnected at once the hub stayed at its peak,
# because an arena goes back to the system only once every object in it is freed
# (hub.host.memory_return). With the C library's, the trim after a burst gives most of it
# back, for at most a few per cent more CPU per request (benchmarks/RESULTS.md, "Big
# workspaces"), and each small object costs a few bytes more.
SERVE_ALLOCATOR = "malloc"


def _serve_with_the_c_allocator() -> None:
    """Start this same command again with ``PYTHONMALLOC=malloc``, unless it is set already.

    The allocator is chosen as the interpreter starts, so the process replaces itself
    (``exec``: the same process id, arguments and interpreter options, which a supervisor and
    ``kill`` rely on). An operator's own ``PYTHONMALLOC`` (``pymalloc``, ``debug``) is kept,
    and so is this process where there is no ``exec`` to do it with.
    """
    if os.environ.get("PYTHONMALLOC") or os.name != "posix" or not sys.executable:
        return
    # Through the environment, so that the next start sees it set and serves.
    environment = {**os.environ, "PYTHONMALLOC": SERVE_ALLOCATOR}
    try:
        os.execve(sys.executable, sys.orig_argv, environment)
    except OSError as error:  # serving matters more than the allocator
        print(f"warning: serving with CPython's allocator ({error})", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve" and argv is None:
        # Only the command line itself: `main(["serve"])` called from a program must not
        # replace the program.
        _serve_with_the_c_allocator()
    if args.command in _SDK_COMMANDS:
        return _run_sdk_only(args)
    try:
        from hub.config import load_settings
        from hub.core.errors import HubError
    except ModuleNotFoundError as missing:
        print(
            f"error [server_not_installed]: {missing}\n"
            "  next: install the hub with its server: pip install 'lineup-hub[server]'",
            file=sys.stderr,
        )
        return 2
    try:
        overrides = {
            key: value
            for key, value in (
                ("host", getattr(args, "host", None)),
                ("port", getattr(args, "port", None)),
                ("database_url", getattr(args, "database_url", None)),
            )
            if value is not None
        }
        # Agent-side commands run on an agent's machine: nothing of the hub's to set up there.
        hub_side = args.command not in _AGENT_SIDE
        settings = load_settings(hub_side=hub_side, **overrides)
        configure_logging(settings.log_level, settings.log_format)
        return asyncio.run(_COMMANDS[args.command](args, settings))
    except HubError as error:
        # One line, so that it is whole in a service manager's log and easy to grep.
        print(f"error [{error.code}]: {error.message} next: {error.hint}", file=sys.stderr)
        return getattr(error, "exit_status", 2)
    except KeyboardInterrupt:
        return 130


def _run_sdk_only(args: argparse.Namespace) -> int:
    # Read as the hub reads them, without its settings module (which needs the server).
    configure_logging(
        os.environ.get("LINEUP_LOG_LEVEL", "INFO").upper(),
        os.environ.get("LINEUP_LOG_FORMAT", "text"),
    )
    try:
        return asyncio.run(_SDK_COMMANDS[args.command](args))
    except KeyboardInterrupt:
        return 130


def _print_json(value: dict[str, Any]) -> None:
    print(json.dumps(value))


@command("config")
async def _config(args: argparse.Namespace, settings: Settings) -> int:
    from hub.config import settings_table

    print(settings_table())
    return 0


@command("migrate")
async def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.store.database import migrate

    await migrate(settings.resolved_database_url)
    print("database is up to date")
    return 0


@command("restored")
async def _restored(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.log.events import start_new_epochs
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        count = await start_new_epochs()
    print(f"new log epoch for {count} workspace(s): connected clients will resync")
    return 0


@command("backup")
async def _backup(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from hub.host.backups import backup

    manifest = await backup(settings, Path(args.file))
    print(f"backup of LineUp Hub {manifest.hub_version} ({manifest.migration}) in {args.file}")
    return 0


@command("restore")
async def _restore(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from hub.host.backups import restore

    manifest, epochs = await restore(settings, Path(args.file))
    print(
        f"restored the backup of LineUp Hub {manifest.hub_version}; new log epoch for "
        f"{epochs} workspace(s): agents and browsers will resync"
    )
    return 0


@command("serve")
async def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    from hub.channels.runtime import check_channel_settings
    from hub.host.app import create_app
    from hub.host.collector_tuning import tune_for_serving
    from hub.host.lifecycle import shutdown_requested
    from hub.host.memory_return import MemoryReturn
    from hub.host.startup_checks import listening_socket, prepare_database
    from hub.host.websocket_compression import decline_permessage_deflate
    from hub.host.websocket_limits import limit_websocket_frames

    # Checked before the server starts, so a failure is one line (see startup_checks).
    listening = listening_socket(settings.host, settings.port)
    try:
        await prepare_database(settings.resolved_database_url)
        await check_channel_settings(settings)
    except BaseException:
        listening.close()
        raise
    app = create_app(settings)
    decline_permessage_deflate()

    @app.while_serving  # registered last, so it runs once every startup hook has
    async def _tune_collector() -> AsyncIterator[None]:
        tune_for_serving()
        memory = MemoryReturn()
        memory.start()
        yield
        await memory.stop()

    config = Config()
    config.bind = [f"fd://{listening.detach()}"]  # hypercorn takes the socket over
    config.accesslog = None
    # Hand hypercorn our logger so its lines go through the one configured handler once.
    config.errorlog = logging.getLogger("hypercorn.error")
    config.graceful_timeout = 5
    limit_websocket_frames(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)

    async def stopping() -> None:
        await stop.wait()
        await shutdown_requested(app)  # sockets told to go now, not cut after the grace

    print(f"LineUp Hub: open {settings.resolved_public_url}", flush=True)
    await serve(app, config, shutdown_trigger=stopping)  # type: ignore[arg-type]
    return 0


@command("user create")
async def _user_create(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import create_user
    from hub.core.store.database import database

    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else None
    async with database(settings.resolved_database_url):
        user, workspace = await create_user(args.email, password, args.display_name)
    _print_json({"userId": user.id, "workspaceId": workspace.id})
    return 0


@command("user list")
async def _user_list(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.operator import list_users, user_view
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        for user in await list_users():
            _print_json(user_view(user))
    return 0


@command("user set-password")
async def _user_set_password(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import user_by_email
    from hub.core.people.operator import set_password
    from hub.core.store.database import database

    password = sys.stdin.readline().rstrip("\n")
    async with database(settings.resolved_database_url):
        await set_password(await user_by_email(args.email), password)
    print(f"new password set for {args.email}; their sessions are ended", file=sys.stderr)
    return 0


@command("user two-factor-off")
async def _user_two_factor_off(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import user_by_email
    from hub.core.people.operator import turn_off_two_factor
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        await turn_off_two_factor(await user_by_email(args.email))
    print(f"two-factor sign-in is off for {args.email}; their sessions are ended", file=sys.stderr)
    return 0


@command("user disable")
@command("user enable")
async def _user_disable(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import user_by_email
    from hub.core.people.operator import set_disabled, user_view
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        user = await set_disabled(await user_by_email(args.email), args.action == "disable")
    _print_json(user_view(user))
    return 0


@command("token create")
async def _token_create(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import create_api_token, user_by_email
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        user = await user_by_email(args.email)
        _, secret = await create_api_token(user, args.name, via="cli")
    print(secret)
    return 0


@command("token list")
async def _token_list(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import active_tokens, token_view, user_by_email
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        for token in await active_tokens(await user_by_email(args.email)):
            print(json.dumps(token_view(token)))
    return 0


@command("token revoke")
async def _token_revoke(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.people.accounts import revoke_api_token, token_owner, token_view
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        owner = await token_owner(args.token_id)
        _print_json(token_view(await revoke_api_token(owner, args.token_id, via="cli")))
    return 0


@command("push rotate-keys")
async def _push_rotate_keys(args: argparse.Namespace, settings: Settings) -> int:
    from hub.channels.push import keys
    from hub.core.notify.push_subscriptions import drop_all
    from hub.core.store.database import database

    vapid = keys.rotate(settings.data_dir)
    # Push services take pushes for a subscription only with the key it was made with.
    async with database(settings.resolved_database_url):
        dropped = await drop_all()
    print(f"new VAPID public key: {keys.public_key(vapid)}")
    print(
        f"{dropped} browser subscription(s) ended: each person turns push on again in "
        "Settings. Restart the hub to use the new key.",
        file=sys.stderr,
    )
    return 0


@command("pair")
async def _pair(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.agents.pairing import create_pairing_code
    from hub.core.errors import NotFound
    from hub.core.store.database import database
    from hub.core.store.models import Workspace

    async with database(settings.resolved_database_url):
        if not await Workspace.filter(id=args.workspace).exists():
            raise NotFound(
                f"Workspace {args.workspace} does not exist.",
                code="workspace_not_found",
                hint="`lineup user create` prints your workspace id.",
            )
        code, expires_at = await create_pairing_code(
            args.workspace, secret_key=settings.secret_key, ttl_s=settings.pairing_code_ttl_s
        )
    print(code)
    print(f"valid until {expires_at:%H:%M:%S} UTC; on the agent's machine run:", file=sys.stderr)
    print(
        f"  lineup agent demo --hub {settings.resolved_public_url} --pair {code}", file=sys.stderr
    )
    return 0


def _sdk_agent(args: argparse.Namespace, profile: str, default_name: str) -> Any:
    from hub.sdk import Agent

    return Agent(
        args.hub,
        credential=args.token,
        pairing_code=args.pair,
        name=args.name or default_name,
        profile=profile,
        state_dir=args.state_dir,
    )


def _print_sdk_error(error: BaseException) -> int:
    from hub.sdk import HubRefused

    if isinstance(error, HubRefused):
        print(f"error [{error.code}]: {error.message}\n  next: {error.hint}", file=sys.stderr)
    else:
        print(f"error: {error}", file=sys.stderr)
    return 2


@command("agents list")
async def _agents_list(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.agents.registry import agent_view, list_agents
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        for agent in await list_agents(args.workspace):
            print(json.dumps(agent_view(agent)))
    return 0


@command("agents confirm")
async def _agents_confirm(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.agents.registry import agent_view, confirm_agent
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        agent = await confirm_agent(args.workspace, args.agent_id, args.name, by="system")
        _print_json(agent_view(agent))
    return 0


@command("agents revoke")
async def _agents_revoke(args: argparse.Namespace, settings: Settings) -> int:
    from hub.core.agents.registry import agent_view, revoke_agent
    from hub.core.store.database import database

    async with database(settings.resolved_database_url):
        agent = await revoke_agent(args.workspace, args.agent_id, by="system")
        _print_json(agent_view(agent))
    return 0


@sdk_command("agent demo")
async def _agent_demo(args: argparse.Namespace) -> int:
    import socket

    from hub.sdk import SdkError
    from hub.sdk.adapters import demo

    agent = _sdk_agent(args, "demo", f"Demo agent on {socket.gethostname()}")
    demo.install(agent, pause_s=args.pause, say=lambda line: print(line, flush=True))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await agent.start()
    except SdkError as error:
        return _print_sdk_error(error)
    print(f"connected to {agent.hub} as agent {agent.agent_id}; waiting for tasks", flush=True)
    running = asyncio.create_task(agent.run())
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    await agent.close()
    failure = running.exception() if running.done() and not running.cancelled() else None
    return _print_sdk_error(failure) if failure is not None else 0


@sdk_command("agent exec")
async def _agent_exec(args: argparse.Namespace) -> int:
    import shlex
    import socket
    from pathlib import Path

    from hub.sdk import SdkError
    from hub.sdk.adapters.exec_command import run_after_approval

    argv = list(args.argv)
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("error: nothing to run; put the command after --", file=sys.stderr)
        return 2
    agent = _sdk_agent(args, "exec", f"Command runner on {socket.gethostname()}")
    try:
        await agent.start()
        # Its own task: the person follows the run (progress, log, exit status) on it.
        task = await agent.create_task(
            f"Run {shlex.join(argv)}"[:500],
            description=f"In {Path.cwd()} on {socket.gethostname()}",
        )
        return await run_after_approval(
            agent,
            argv,
            cwd=Path.cwd(),
            environ=dict(os.environ),
            log_dir=agent.store.path.parent / "logs",
            say=lambda line: print(line, flush=True),
            task=task,
        )
    except SdkError as error:
        return _print_sdk_error(error)
    finally:
        await agent.close()


@command("mcp")
async def _mcp(args: argparse.Namespace, settings: Settings) -> int:
    import socket

    from hub.sdk import SdkError

    try:
        from plugins.mcp_server.stdio import serve_stdio
    except ModuleNotFoundError as missing:
        print(
            f"error: {missing}; install the extra: pip install 'lineup-hub[mcp]'", file=sys.stderr
        )
        return 2
    agent = _sdk_agent(args, "mcp", f"MCP agent on {socket.gethostname()}")
    try:
        if args.print_credential:
            await agent.start()
            print(agent.credential())
            await agent.close()
            return 0
        await serve_stdio(agent, args.wait or settings.mcp_wait_s)
    except SdkError as error:
        return _print_sdk_error(error)
    return 0


def _hook_target(args: argparse.Namespace) -> Any:
    from hub.coding_agents.connect import Target

    return Target.of(
        args.cli,
        project=getattr(args, "project", None),
        user=bool(getattr(args, "user", False)),
        codex_home=getattr(args, "codex_home", None),
    )


@sdk_command("connect")
async def _connect(args: argparse.Namespace) -> int:
    from hub.coding_agents import credentials, hook_command
    from hub.coding_agents.connect import pair
    from hub.sdk import SdkError
    from hub.sdk.state import normalise_hub_url

    if args.wait < 1 or args.wait > 24 * 3600:
        print("error: --wait must be from 1 second to a day", file=sys.stderr)
        return 2
    try:
        hub = normalise_hub_url(args.hub)
    except ValueError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    connection = credentials.load(args.cli)
    if args.pair:
        try:
            connection = await pair(args.cli, hub, args.pair)
        except SdkError as error:
            return _print_sdk_error(error)
        stored = credentials.save(args.cli, connection)
        print(f"paired as agent {connection.agent_id}; credential kept in {stored} (0600)")
    elif connection is None or connection.hub != hub:
        print(
            f"error [not_paired]: this machine's {args.cli} is not paired with {hub}\n"
            f"  next: create a pairing code on the hub's Agents page, then run "
            f"`lineup connect {args.cli} --hub {hub} --pair CODE`",
            file=sys.stderr,
        )
        return 2
    target = _hook_target(args)
    try:
        changed = target.install(hook_command.build(args.cli, args.wait), args.wait)
    except ValueError as problem:
        print(f"error [hooks_not_written]: {problem}", file=sys.stderr)
        return 2
    print(f"hooks {'added to' if changed else 'already in'} {target.path}")
    return 0


@sdk_command("disconnect")
async def _disconnect(args: argparse.Namespace) -> int:
    from hub.coding_agents import credentials

    target = _hook_target(args)
    try:
        changed = target.uninstall()
    except ValueError as problem:
        print(f"error [hooks_not_written]: {problem}", file=sys.stderr)
        return 2
    print(f"hooks {'removed from' if changed else 'not in'} {target.path}")
    if args.forget and credentials.remove(args.cli):
        print(f"credential deleted: {credentials.connection_file(args.cli)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
