// What a notification says on the wire: the webhook's JSON body (DESIGN.md:
// exactly {id, type, sessionId, title, text, url, at}), its signature, and
// the link that opens the session. Invariants: `id` is the notification's id,
// the same on every attempt and every channel, so a receiver can dedupe; the
// signature is the HMAC-SHA256 of the exact bytes sent; the link is the
// public origin (NOMOS_PUBLIC_URL) plus the page's own session address
// (web/client/main.tsx reads `#/s/<id>`).
import { createHmac } from "node:crypto";
import type { NotificationType } from "../db/schema.js";

export interface NotificationPayload {
  id: string;
  type: NotificationType;
  sessionId: string;
  title: string;
  text: string;
  url: string;
  at: string;
}

export const SIGNATURE_HEADER = "X-Nomos-Signature";

/** The address of a session on the page, under the public origin. */
export function sessionUrl(origin: URL, sessionId: string): string {
  return `${origin.origin}/#/s/${sessionId}`;
}

export function payloadOf(
  n: { notificationId: string; type: NotificationType; sessionId: string; title: string; text: string; at: Date },
  origin: URL,
): NotificationPayload {
  return {
    id: n.notificationId,
    type: n.type,
    sessionId: n.sessionId,
    title: n.title,
    text: n.text,
    url: sessionUrl(origin, n.sessionId),
    at: n.at.toISOString(),
  };
}

/** `sha256=<hex HMAC-SHA256 of body>`: the value of X-Nomos-Signature. */
export function signatureOf(body: string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`;
}

/** Types that need the operator now: sent with high priority. */
export const URGENT_TYPES: ReadonlySet<NotificationType> = new Set(["approval_requested", "plan_blocked", "turn_failed"]);
