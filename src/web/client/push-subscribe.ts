/// <reference lib="dom" />
// Web Push in this browser: register the service worker (/sw.js), subscribe
// with the server's VAPID public key and hand the subscription to the
// server; or undo both. Browsers allow it only on https or localhost.
import { api } from "./api.js";

export const pushSupported = () => "serviceWorker" in navigator && "PushManager" in window && typeof Notification !== "undefined";

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const b64 = (base64url + "=".repeat((4 - (base64url.length % 4)) % 4)).replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(b64);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** This browser's current subscription, if any. */
export async function pushCurrent(): Promise<PushSubscription | null> {
  if (!pushSupported()) return null;
  const reg = await navigator.serviceWorker.getRegistration("/");
  return (await reg?.pushManager.getSubscription()) ?? null;
}

export async function pushEnable(): Promise<void> {
  if (!pushSupported()) throw new Error("this browser cannot receive Web Push (it needs https, or localhost)");
  const permission = await Notification.requestPermission();
  if (permission !== "granted") throw new Error("notifications are blocked for this site; allow them in the browser's site settings");
  const reg = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  await navigator.serviceWorker.ready;
  const { publicKey } = await api<{ publicKey: string }>("GET", "/api/notifications/vapid-public-key");
  const sub =
    (await reg.pushManager.getSubscription()) ??
    (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) }));
  await api("POST", "/api/notifications/push-subscriptions", sub.toJSON());
}

export async function pushDisable(): Promise<void> {
  const sub = await pushCurrent();
  if (!sub) return;
  await api("DELETE", "/api/notifications/push-subscriptions", { endpoint: sub.endpoint });
  await sub.unsubscribe();
}
