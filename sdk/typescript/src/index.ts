// The TypeScript adapter SDK: connect an agent to a LineUp hub over LAP/0.1.
//
// No runtime dependencies: the platform's WebSocket and fetch (Node 22+, Deno, Bun) and a
// few `node:` modules (crypto, fs, os, path). The wire types are generated from the hub's
// own protocol models (protocol.generated.ts). docs/sdk.md has a complete adapter.
export {
  ActionMismatch,
  AgentClosed,
  AuthenticationFailed,
  HubRefused,
  InvalidAction,
  NotApproved,
  NotPaired,
  SdkError,
  TaskCancelled,
} from "./errors.ts";
export { Agent } from "./agent.ts";
export { SDK_VERSION, type AgentOptions } from "./options.ts";
export {
  ProposedAction,
  actionHash,
  canonicalJson,
  shortHash,
  type ActionFields,
} from "./actions.ts";
export { Backoff, type BackoffOptions } from "./backoff.ts";
export { approvalCard, type ApprovalFields } from "./cards.ts";
export { Downlink, type Handler, type Logger, type TaskHandler } from "./dispatch.ts";
export { ExactNumber, parseExact } from "./exact.ts";
export { DeliveryLedger } from "./ledger.ts";
export { Resolution } from "./resolution.ts";
export { AgentState, StateStore, normaliseHubUrl } from "./state.ts";
export {
  MessageStream,
  Task,
  type MessageAttachment,
  type TaskStatus,
  type WithdrawalReason,
} from "./task.ts";
export type * from "./protocol.generated.ts";
