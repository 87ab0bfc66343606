// A complete LineUp adapter in TypeScript: run a shell command only after a person approves
// exactly that command, from any surface (web, email, Telegram, a notebook).
//
//   node shell-approval.ts http://127.0.0.1:8000 7KQ2-M9XD -- make deploy   # first run pairs
//   node shell-approval.ts http://127.0.0.1:8000 -- make deploy             # later runs
//
// The card shows the command, the directory, the host and the user as an exact action: the
// decision is bound to its hash, and `approvedAction` checks that hash before anything runs.
// Approved, the command runs with its output shown here and kept as an artifact, and this
// exits with the command's status; rejected (or expired), nothing runs and it exits with 77.
import { spawn } from "node:child_process";
import * as os from "node:os";

import {
  Agent,
  HubRefused,
  NotApproved,
  ProposedAction,
} from "@lineup-hub/sdk";

const EXIT_REJECTED = 77; // sysexits EX_NOPERM: a person did not permit the command
const MAX_URL_LENGTH = 2000; // an artifact's URL, as the protocol allows

const separator = process.argv.indexOf("--");
const [hub, pairingCode] = process.argv.slice(
  2,
  separator < 0 ? undefined : separator,
);
const command = separator < 0 ? [] : process.argv.slice(separator + 1);
if (!hub || command.length === 0) {
  console.error(
    "usage: node shell-approval.ts HUB [PAIRING-CODE] -- COMMAND...",
  );
  process.exit(2);
}

const agent = new Agent(hub, {
  pairingCode,
  name: "Shell (TypeScript)",
  profile: "typescript-shell",
});
const action = new ProposedAction({
  kind: "shell.command",
  fields: {
    command: command.join(" "),
    cwd: process.cwd(),
    host: os.hostname(),
    user: os.userInfo().username,
  },
});

function run(
  line: string,
  cwd: string,
): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(line, {
      cwd,
      shell: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const keep = (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) =>
      resolve({ status: 127, output: `${output}${error.message}\n` }),
    );
    child.on("close", (status) => resolve({ status: status ?? 1, output }));
  });
}

let exitStatus = 1;
try {
  await agent.start();
  const answer = await agent.requestApproval(
    `Run \`${action.fields["command"]}\`?`,
    {
      description: `The command runs in ${action.fields["cwd"]} on ${action.fields["host"]} as ${action.fields["user"]}.`,
      impact: "Whatever the command does, with this user's rights.",
      risk: "high",
      action,
    },
  );
  try {
    const approved = answer.approvedAction(action); // the hash is checked here
    const { status, output } = await run(
      String(approved["command"]),
      String(approved["cwd"]),
    );
    const dataUrl = `data:text/plain;base64,${Buffer.from(output).toString("base64")}`;
    await agent.addArtifact(
      "output.txt",
      dataUrl.length <= MAX_URL_LENGTH
        ? dataUrl
        : "data:text/plain,(output too long to attach)",
      {
        mimeType: "text/plain",
        summary: `exit status ${status}; ${output.trim().split("\n").slice(-3).join(" | ").slice(0, 1500)}`,
      },
    );
    exitStatus = status;
  } catch (error) {
    if (!(error instanceof NotApproved)) throw error;
    const why = answer.expired
      ? "nobody decided in time"
      : `${answer.respondedBy} said ${answer.optionId}`;
    console.error(`not run: ${why}`);
    exitStatus = EXIT_REJECTED;
  }
} catch (error) {
  if (error instanceof HubRefused)
    console.error(
      `error [${error.code}]: ${error.hubMessage}\n  next: ${error.hint}`,
    );
  else console.error(error);
  exitStatus = 2;
} finally {
  await agent.close();
}
process.exit(exitStatus);
