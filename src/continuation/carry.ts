// Results that finished while no assent window was open wait for the
// operator: this claims them for the operator's next message, window or not,
// and turns them into notes. Turns.chat marks them delivered in the
// transaction that queues the operator's turn; should that transaction never
// commit, the claim's lease lapses and the sweep delivers them instead, so
// they are neither dropped nor delivered twice.
import type { Db } from "../db/connect.js";
import { withActor } from "../db/with-actor.js";
import { executionNote } from "../executions/execution-note.js";
import { planExecutionsClaimForOperatorTurn } from "./ledger.js";

/** Results claimed for the operator's next turn: the notes, and the executions they speak of. */
export interface CarriedNotes {
  notes: string[];
  executionIds: string[];
}

export function carryPendingResults(deps: { db: Db; owner: string; leaseSeconds?: number }) {
  return async (sessionId: string): Promise<CarriedNotes> => {
    const executionIds = await withActor(deps.db.kysely, "system:continuation", (tx) =>
      planExecutionsClaimForOperatorTurn(tx, { sessionId, owner: deps.owner, leaseSeconds: deps.leaseSeconds ?? 30 }),
    );
    if (executionIds.length === 0) return { notes: [], executionIds };
    const rows = await deps.db.kysely.selectFrom("executions").selectAll().where("id", "in", executionIds).orderBy("finished_at").execute();
    return { notes: rows.map(executionNote), executionIds };
  };
}
