// Each kind of card, asked by the agent and answered by a person on the web (the JSON API)
// and in Telegram (the hub's bot, through a local Bot API server): the agent's awaited call
// resolves with the decision. Policies and expiry decide a card nobody answered.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";

import { Agent, Backoff, type InteractionCard, type Resolution } from "../../src/index.ts";
import { HUB, Refused, askedCard, confirm, pairingCode, person, respond, skip } from "./person.ts";

const quiet = { info() {}, warn() {}, error() {} };

function cards(surface: string): Record<string, InteractionCard> {
  return {
    approval: {
      type: "approval",
      title: `Restart the workers? (${surface})`,
      impact: "Jobs pause for a minute.",
    },
    choice: {
      type: "choice",
      title: `Which region? (${surface})`,
      options: [
        { id: "eu", label: "Europe" },
        { id: "us", label: "United States" },
      ],
    },
    several: {
      type: "choice",
      title: `Which checks? (${surface})`,
      multiple: true,
      minSelections: 1,
      options: [
        { id: "lint", label: "Lint" },
        { id: "unit", label: "Unit tests" },
        { id: "e2e", label: "End to end" },
      ],
    },
    input: { type: "input", title: `Contact address? (${surface})`, input: { format: "email" } },
    review: {
      type: "review",
      title: `Review the plan (${surface})`,
      content: "1. Back up\n2. Migrate",
    },
  };
}

function checkAnswer(kind: string, answer: Resolution, via: string): void {
  assert.equal(answer.via, via, kind);
  assert.match(answer.respondedBy, /^user:/);
  if (kind === "approval") assert.equal(answer.approved, true);
  if (kind === "choice") assert.deepEqual([answer.optionId, answer.optionIds], ["us", ["us"]]);
  if (kind === "several") assert.deepEqual(answer.optionIds, ["lint", "e2e"]);
  if (kind === "input") assert.equal(answer.text, "ops@example.com");
  if (kind === "review") {
    assert.deepEqual(
      [answer.optionId, answer.comment, answer.approved],
      ["request_changes", "Add a rollback step", false],
    );
  }
}

describe("cards", { skip }, () => {
  let agent: Agent;

  before(async () => {
    agent = new Agent(HUB, {
      pairingCode: await pairingCode(),
      name: "Asker",
      stateDir: fs.mkdtempSync(path.join(os.tmpdir(), "lineup-ts-cards-")),
      backoff: new Backoff({ initialS: 0.05, maximumS: 0.5 }),
      logger: quiet,
    });
    await agent.start();
    await confirm(agent.agentId!, "Asker");
  });

  after(async () => {
    await agent?.close();
  });

  for (const [kind, card] of Object.entries(cards("web"))) {
    test(`${kind}, answered on the web`, async () => {
      const asking = agent.requestInteraction(card);
      const asked = await askedCard(card.title);
      if (kind === "input") {
        await assert.rejects(respond(asked.id, { text: "not an address" }), (error: unknown) => {
          assert.ok(error instanceof Refused);
          assert.equal(
            error.status,
            422,
            "an answer that does not fit is refused and changes nothing",
          );
          return true;
        });
      }
      const answer = {
        approval: { optionId: "approve" },
        choice: { optionId: "us" },
        several: { optionIds: ["e2e", "lint"] },
        input: { text: "ops@example.com" },
        review: { optionId: "request_changes", comment: "Add a rollback step" },
      }[kind]!;
      await respond(asked.id, answer);
      checkAnswer(kind, await asking, "api");
    });
  }

  for (const [kind, card] of Object.entries(cards("Telegram"))) {
    test(`${kind}, answered in Telegram`, async () => {
      const asking = agent.requestInteraction(card);
      const title = card.title;
      if (kind === "approval") {
        await person("/telegram/press", { title, label: "Approve" });
      } else if (kind === "choice") {
        await person("/telegram/press", { title, label: "United States" });
      } else if (kind === "several") {
        await person("/telegram/press", { title, label: "Lint" });
        await person("/telegram/press", { title, label: "End to end" });
        await person("/telegram/press", { title, label: "Submit (2)" });
      } else if (kind === "input") {
        const retry = await person("/telegram/reply", { title, text: "not an address" });
        assert.match(retry.text, /doesn't fit/);
        await person("/telegram/reply", { messageId: retry.messageId, text: "ops@example.com" });
      } else {
        await person("/telegram/press", { title, label: "Request changes" });
        const prompt = await person("/telegram/last");
        assert.match(prompt.text, /what should change/);
        await person("/telegram/reply", {
          messageId: prompt.messageId,
          text: "Add a rollback step",
        });
      }
      checkAnswer(kind, await asking, "telegram");
      const shown = await person("/telegram/outcome", { title, text: "via Telegram" });
      assert.deepEqual(shown.buttons, [], "decided: the message is read-only");
    });
  }

  test("a card nobody answers expires, and the agent is told nothing was decided", async () => {
    const answer = await agent.requestApproval("Rotate the keys?", {
      expiresAt: new Date(Date.now() + 3000),
      policy: { approvers: ["owner@example.com"] },
    });
    assert.equal(answer.expired, true);
    assert.equal(answer.approved, false);
    assert.equal(answer.optionId, null);
  });

  test("a high-risk card's policy denies it when its time runs out", async () => {
    const answer = await agent.requestApproval("Delete the backups?", {
      risk: "high",
      expiresAt: new Date(Date.now() + 3000),
      policy: { approvers: ["owner@example.com"], onExpiry: "deny" },
    });
    assert.equal(answer.optionId, "reject");
    assert.deepEqual([answer.respondedBy, answer.via], ["hub:policy", "policy"]);
  });

  test("a card the hub refuses is a clear error, and nothing is asked", async () => {
    await assert.rejects(
      agent.requestInteraction({
        type: "choice",
        title: "Only one option?",
        options: [{ id: "a", label: "A" }],
      }),
      (error: any) =>
        error.code === "invalid_payload" &&
        /2 to 5 options/.test(error.message) &&
        Boolean(error.hint),
    );
  });
});
