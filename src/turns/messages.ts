// The transcript's writes. Invariant: assistant content is stored exactly as
// the model returned it (tool_use ids included), tool_results as the blocks
// sent back, operator words and system notes as [{type: "text", text}], so a
// replay pairs every tool_use with its tool_result. Each row is announced by
// a `message` event in the same transaction. The one exception to "exactly":
// a NUL or lone surrogate the model sent is stored as U+FFFD (db/storable.ts),
// since PostgreSQL's jsonb cannot hold it and refusing would lose the reply.
import type { Kysely } from "kysely";
import type { Database, Message, MessageKind } from "../db/schema.js";
import { storableDeep } from "../db/storable.js";
import { sessionEventsAppend } from "../events/session-events.js";
import { messageView } from "../sessions/message-view.js";

export async function messageAppend(
  tx: Kysely<Database>,
  p: { sessionId: string; turnId: string | null; kind: MessageKind; content: unknown[] },
): Promise<Message> {
  const row = await tx
    .insertInto("messages")
    .values({ session_id: p.sessionId, turn_id: p.turnId, kind: p.kind, content: storableDeep(p.content) })
    .returningAll()
    .executeTakeFirstOrThrow();
  await sessionEventsAppend(tx, [{ sessionId: p.sessionId, turnId: p.turnId, type: "message", data: { message: messageView(row) } }]);
  return row;
}
