// What Turns asks of whoever runs a claimed turn (in production the agent
// loop, agent/loop.ts's agentTurn; in tests a script), so turns/ depends on
// no agent and the agent imports this contract from here. Invariant: a run
// reports exactly one outcome; Turns records it as the turn's end.
import type { EventWriter } from "../events/event-writer.js";

export interface AgentTurnContext {
  sessionId: string;
  turnId: string;
  signal: AbortSignal;
  writer: EventWriter;
  /** Called after each model iteration (the turn's lease renewal). */
  onIteration?: (iterations: number) => Promise<void>;
}

export interface AgentTurnOutcome {
  status: "completed" | "failed" | "aborted";
  iterations: number;
  error?: string;
}
