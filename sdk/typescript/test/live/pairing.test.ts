// Pairing, the stored credential, and the hub refusing an identity: over a real socket.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, test } from "node:test";

import { Agent, AuthenticationFailed, Backoff, NotPaired } from "../../src/index.ts";
import { HUB, api, confirm, pairingCode, skip } from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

function stateDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-pairing-"));
}

function agent(dir: string, options: ConstructorParameters<typeof Agent>[1] = {}): Agent {
  return new Agent(HUB, {
    stateDir: dir,
    backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
    logger: quiet,
    ...options,
  });
}

describe("pairing", { skip }, () => {
  test("a code pairs the agent once; the credential is saved 0600 and used from then on", async () => {
    const dir = stateDir();
    const first = agent(dir, { pairingCode: await pairingCode(), name: "Builder" });
    await first.start();
    assert.match(first.agentId ?? "", /^agent_|^agt_/);
    await confirm(first.agentId!, "Builder");
    await first.close();

    const [file] = fs.readdirSync(dir).filter((name) => name.endsWith(".json"));
    const stat = fs.statSync(path.join(dir, file!));
    assert.equal(
      stat.mode & 0o777,
      0o600,
      "the state file holds a secret: only its owner reads it",
    );
    const saved = JSON.parse(fs.readFileSync(path.join(dir, file!), "utf8"));
    assert.match(saved.credential, /^lu_agt_/);
    assert.equal(saved.agent_id, first.agentId);
    assert.ok(saved.epoch, "the log's epoch is kept with the position");

    const again = agent(dir); // no code: the stored credential
    await again.start();
    assert.equal(again.agentId, first.agentId);
    const [listed] = (await api("GET", "/agents")).agents.filter(
      (a: any) => a.id === first.agentId,
    );
    assert.equal(listed.status, "online");
    assert.equal(listed.runtime.startsWith("node"), true);
    await again.close();
  });

  test("a wrong code is a clear error with a next step", async () => {
    const refused = agent(stateDir(), { pairingCode: "AAAA-AAAA", name: "x" });
    await assert.rejects(refused.start(), (error: unknown) => {
      assert.ok(error instanceof AuthenticationFailed);
      assert.equal(error.code, "pairing_code_unknown");
      assert.ok(error.hint);
      return true;
    });
  });

  test("without a credential or a code nothing connects", async () => {
    await assert.rejects(agent(stateDir()).start(), NotPaired);
  });

  test("a revoked agent stops with the hub's reason and its credential stays refused", async () => {
    const dir = stateDir();
    const revoked = agent(dir, { pairingCode: await pairingCode(), name: "Revoked" });
    await revoked.start();
    const stopped = assert.rejects(revoked.run(), (error: unknown) => {
      assert.ok(error instanceof AuthenticationFailed);
      assert.equal(error.code, "credential_revoked");
      assert.match(
        error.hint,
        /[Pp]air/,
        "the hub's next step, from the error frame before the close",
      );
      return true;
    });
    await api("POST", `/agents/${revoked.agentId}/revoke`);
    await stopped;
    // The upgrade itself is refused now (HTTP 401, hidden by the WebSocket API): the SDK
    // asks the hub why and stops rather than knocking forever.
    await assert.rejects(agent(dir).start(), (error: unknown) => {
      assert.ok(error instanceof AuthenticationFailed);
      assert.equal(error.code, "credential_revoked");
      assert.ok(error.hint);
      return true;
    });
  });
});
