// The page's service worker (served at /sw.js, scope "/"): shows a Web Push
// notification from Nomos (src/notifications/senders.ts sends the payload
// {id, type, sessionId, title, text, url, at}) and, on click, focuses a tab of
// Nomos on that session or opens one. Plain JavaScript, served as is: no
// bundle step. The tag is per session and type, as the page's own background
// notifications use (web/client/background-notices.ts), so the two replace
// each other instead of stacking.
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { title: "Nomos", text: event.data ? event.data.text() : "" };
  }
  const title = data.title || "Nomos";
  event.waitUntil(
    self.registration.showNotification(title, {
      body: data.text || "",
      tag: data.sessionId ? `nomos:${data.sessionId}:${data.type}` : data.id,
      data: { url: data.url || "/" },
      requireInteraction: data.type === "approval_requested",
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = new URL(event.notification.data?.url || "/", self.location.origin);
  // Only ever navigate to this origin: a push payload names the session, not where to go.
  const target = url.origin === self.location.origin ? url.href : self.location.origin;
  event.waitUntil(
    (async () => {
      const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      for (const tab of tabs) {
        if (new URL(tab.url).origin === self.location.origin && "focus" in tab) {
          await tab.navigate(target).catch(() => {});
          return tab.focus();
        }
      }
      return self.clients.openWindow(target);
    })(),
  );
});
