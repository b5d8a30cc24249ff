// What Turns asks of whoever runs a claimed turn (in production the agent
// loop, agent/loop.ts's agentTurn; in tests a script), so turns/ depends on
// no agent and the agent imports this contract from here. Invariant: a run
// reports exactly one outcome; Turns records it as the turn's end.
import type { EventWriter } from "../events/event-writer.js";
import type { ModelCallInput } from "../usage/model-calls.js";

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
  /**
   * Writes the run leaves to the turn's end, stored in the statement that
   * ends it (turn-store.ts turnEnd) under `actor`: the last model call's
   * usage and its reply. Only a completed run that has nothing left to do
   * after them leaves any; if that statement fails, the turn ends failed.
   */
  last?: { actor: string; usage: ModelCallInput; reply: unknown[] };
}
