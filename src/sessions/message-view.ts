// The public view of one transcript message (DESIGN.md "Shapes"): what the
// session view, the `message` event and the page see. The only place it is
// defined: messageView builds it from a row in TypeScript, and
// messageViewSql builds the same object inside a statement (the
// continuation queue's single INSERT ... RETURNING), key for key, so the two
// cannot drift apart without this file showing it.
import { type RawBuilder, sql } from "kysely";
import type { Message } from "../db/schema.js";
import type { MessageView } from "../events/contract.js";

// The shape is declared in the event contract (shared with the browser); this module builds it.
export type { MessageView };

export const messageView = (m: Message): MessageView => ({
  id: m.id,
  kind: m.kind,
  turnId: m.turn_id,
  content: m.content,
  createdAt: m.created_at.toISOString(),
});

/** The expressions built so far, by alias: a RawBuilder is immutable, and the turn's statements embed one each time (issue 20). */
const viewSqlByAlias = new Map<string, RawBuilder<MessageView>>();

/** messageView as a jsonb expression over a messages row named `alias` in the statement. */
export function messageViewSql(alias: string): RawBuilder<MessageView> {
  const known = viewSqlByAlias.get(alias);
  if (known) return known;
  const col = (name: keyof Message) => sql.ref(`${alias}.${name}`);
  const built = sql<MessageView>`jsonb_build_object(
    'id', ${col("id")}::text, 'kind', ${col("kind")}, 'turnId', ${col("turn_id")},
    'content', ${col("content")}, 'createdAt', ${col("created_at")})`;
  viewSqlByAlias.set(alias, built);
  return built;
}
