// Sending one notification over one channel: ntfy, a signed webhook, Web
// Push. Each sender makes one HTTP request and either returns (the receiver
// answered 2xx) or throws a SendError saying what went wrong and whether the
// destination is gone for good (a push subscription the push service
// answers 404/410 for). Retrying is the notifier's business, not a sender's.
import webpush from "web-push";
import { type NotificationPayload, SIGNATURE_HEADER, signatureOf, URGENT_TYPES } from "./payload.js";
import type { VapidKeys } from "./vapid.js";

export class SendError extends Error {
  override name = "SendError";
  /** The receiver's HTTP status, when it answered. */
  readonly status: number | undefined;
  /** The destination no longer exists: do not retry, forget it. */
  readonly gone: boolean;
  constructor(message: string, options: { status?: number; gone?: boolean; cause?: unknown } = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.status = options.status;
    this.gone = options.gone ?? false;
  }
}

export interface SendOptions {
  timeoutMs: number;
}

async function post(url: string, init: { headers: Record<string, string>; body: string | Uint8Array }, o: SendOptions): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: init.headers,
      body: typeof init.body === "string" ? init.body : new Uint8Array(init.body),
      signal: AbortSignal.timeout(o.timeoutMs),
      redirect: "error",
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      (err as Error).name === "TimeoutError"
        ? `no answer within ${o.timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new SendError(`POST ${new URL(url).origin} failed: ${why}`, { cause: err });
  }
  // The answer's body is not needed; drain it so the connection is reused.
  const text = await res.text().catch(() => "");
  if (!res.ok) {
    throw new SendError(`POST ${new URL(url).origin} answered ${res.status}${text ? `: ${text.slice(0, 200)}` : ""}`, {
      status: res.status,
    });
  }
  return res;
}

/** HTTP headers carry Latin-1 only; ntfy reads RFC 2047 encoded words for the rest. */
function headerText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is being removed
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, " ");
  return /^[\u0020-\u007e]*$/.test(clean) ? clean : `=?UTF-8?B?${Buffer.from(clean, "utf8").toString("base64")}?=`;
}

/** ntfy: POST the text to the topic URL; title, priority, click action and tags in headers. */
export async function sendNtfy(p: { url: string; token: string | null; payload: NotificationPayload }, o: SendOptions): Promise<void> {
  const headers: Record<string, string> = {
    "Content-Type": "text/plain; charset=utf-8",
    Title: headerText(p.payload.title),
    Priority: URGENT_TYPES.has(p.payload.type) ? "high" : "default",
    Click: p.payload.url,
    Tags: `nomos,${p.payload.type}`,
  };
  if (p.token) headers.Authorization = `Bearer ${p.token}`;
  await post(p.url, { headers, body: p.payload.text }, o);
}

/** A webhook: the JSON payload, signed with the operator's secret. */
export async function sendWebhook(p: { url: string; secret: string; payload: NotificationPayload }, o: SendOptions): Promise<void> {
  const body = JSON.stringify(p.payload);
  await post(
    p.url,
    {
      headers: {
        "Content-Type": "application/json",
        [SIGNATURE_HEADER]: signatureOf(body, p.secret),
        "User-Agent": "Nomos-Notifier",
      },
      body,
    },
    o,
  );
}

/** VAPID's subject: a contact for the push service; an https public URL, or a mailto. */
export function vapidSubject(origin: URL): string {
  return origin.protocol === "https:" && origin.hostname !== "localhost" ? origin.origin : "mailto:nomos@localhost.invalid";
}

/**
 * Web Push: the payload encrypted for the subscription (aes128gcm) and
 * signed with the installation's VAPID key, POSTed to the push service.
 * 404/410 mean the browser unsubscribed: the subscription is gone.
 */
export async function sendPush(
  p: {
    subscription: { endpoint: string; keys: { p256dh: string; auth: string } };
    vapid: VapidKeys;
    subject: string;
    payload: NotificationPayload;
  },
  o: SendOptions,
): Promise<void> {
  const details = webpush.generateRequestDetails(p.subscription, JSON.stringify(p.payload), {
    vapidDetails: { subject: p.subject, publicKey: p.vapid.publicKey, privateKey: p.vapid.privateKey },
    TTL: 24 * 60 * 60,
    urgency: URGENT_TYPES.has(p.payload.type) ? "high" : "normal",
    contentEncoding: "aes128gcm",
  });
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(details.headers)) if (k.toLowerCase() !== "content-length") headers[k] = String(v);
  try {
    await post(details.endpoint, { headers, body: details.body ? new Uint8Array(details.body) : "" }, o);
  } catch (err) {
    if (err instanceof SendError && (err.status === 404 || err.status === 410)) {
      throw new SendError(`${err.message} (the browser's subscription is gone; removed)`, { status: err.status, gone: true, cause: err });
    }
    throw err;
  }
}
