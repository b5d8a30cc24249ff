/** @jsxImportSource hono/jsx/dom */
/// <reference lib="dom" />
// The settings page's notifications section (#/settings): the operator's own
// ntfy topic and webhook, Web Push in this browser, a test send, and the
// delivery log (status, attempts, last error). Secrets are write-only: the
// server says whether one is set, never what it is, and an empty field
// keeps the stored one.

import { useEffect, useState } from "hono/jsx/dom";
import type { DeliveryView } from "../../notifications/deliveries.js";
import { api } from "./api.js";
import { pushCurrent, pushDisable, pushEnable, pushSupported } from "./push-subscribe.js";
import { can } from "./role.js";

interface Channel {
  kind: "ntfy" | "webhook";
  url: string;
  hasSecret: boolean;
  enabled: boolean;
}

interface TestResult {
  channel: string;
  destination: string;
  ok: boolean;
  error?: string;
}

const value = (e: Event) => (e.target as HTMLInputElement).value;

function ChannelForm({ kind, channel, onSaved }: { kind: Channel["kind"]; channel: Channel | undefined; onSaved(): void }) {
  const [url, setUrl] = useState(channel?.url ?? "");
  const [secret, setSecret] = useState("");
  const [error, setError] = useState("");
  useEffect(() => setUrl(channel?.url ?? ""), [channel?.url]);
  const label = kind === "ntfy" ? "ntfy topic URL" : "Webhook URL";
  const secretLabel = kind === "ntfy" ? "Access token (optional)" : "Signing secret (16+ characters)";
  return (
    <form
      class={`notify-channel notify-${kind}`}
      onSubmit={async (e: Event) => {
        e.preventDefault();
        setError("");
        try {
          await api("PUT", `/api/notifications/channels/${kind}`, { url, ...(secret ? { secret } : {}) });
          setSecret("");
          onSaved();
        } catch (err) {
          setError((err as Error).message);
        }
      }}
    >
      <h3>{kind === "ntfy" ? "ntfy" : "Webhook"}</h3>
      <label>
        {label}
        <input
          name={`${kind}-url`}
          type="url"
          value={url}
          placeholder={kind === "ntfy" ? "https://ntfy.sh/my-topic" : "https://…"}
          onInput={(e: Event) => setUrl(value(e))}
        />
      </label>
      <label>
        {secretLabel}
        <input
          name={`${kind}-secret`}
          type="password"
          autocomplete="off"
          value={secret}
          placeholder={channel?.hasSecret ? "set (leave empty to keep)" : ""}
          onInput={(e: Event) => setSecret(value(e))}
        />
      </label>
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
      <div class="notify-actions">
        <button class="btn small primary" type="submit">
          Save
        </button>
        {channel && (
          <button
            class="btn small"
            type="button"
            onClick={async () => {
              await api("DELETE", `/api/notifications/channels/${kind}`);
              onSaved();
            }}
          >
            Remove
          </button>
        )}
      </div>
    </form>
  );
}

export function NotificationSettings() {
  const [channels, setChannels] = useState<Channel[]>([]);
  const [pushCount, setPushCount] = useState(0);
  const [deliveries, setDeliveries] = useState<DeliveryView[]>([]);
  const [pushOn, setPushOn] = useState(false);
  const [pushError, setPushError] = useState("");
  const [tested, setTested] = useState<TestResult[] | undefined>();
  const load = async () => {
    const c = await api<{ channels: Channel[]; pushSubscriptions: number }>("GET", "/api/notifications/channels");
    setChannels(c.channels);
    setPushCount(c.pushSubscriptions);
    setDeliveries((await api<{ deliveries: DeliveryView[] }>("GET", "/api/notifications/deliveries?limit=50")).deliveries);
    setPushOn((await pushCurrent().catch(() => null)) !== null);
  };
  useEffect(() => {
    if (can("operator")) void load();
  }, []);
  if (!can("operator")) {
    return (
      <section class="settings notify-settings">
        <h2>Notifications</h2>
        <p class="sub">Notifications go to operators and admins; a viewer has none to set up.</p>
      </section>
    );
  }
  return (
    <section class="settings notify-settings">
      <h2>Notifications</h2>
      <p class="sub">
        Nomos tells you when a plan needs you (an approval), finishes, is blocked or fails, when the loop guard stops it, and when a window
        expires with results waiting.
      </p>
      <div class="notify-channels">
        <ChannelForm kind="ntfy" channel={channels.find((c) => c.kind === "ntfy")} onSaved={() => void load()} />
        <ChannelForm kind="webhook" channel={channels.find((c) => c.kind === "webhook")} onSaved={() => void load()} />
      </div>
      <div class="notify-push">
        <h3>This browser</h3>
        <p class="sub">
          Web Push reaches this browser even with Nomos closed.{" "}
          {pushCount > 0 ? `${pushCount} browser(s) subscribed.` : "No browser subscribed yet."}
        </p>
        {pushSupported() ? (
          <button
            class="btn small"
            type="button"
            onClick={async () => {
              setPushError("");
              try {
                await (pushOn ? pushDisable() : pushEnable());
              } catch (err) {
                setPushError((err as Error).message);
              }
              await load();
            }}
          >
            {pushOn ? "Turn off push in this browser" : "Enable push in this browser"}
          </button>
        ) : (
          <p class="sub">This browser cannot receive Web Push here (it needs https, or localhost).</p>
        )}
        {pushError && (
          <div class="form-error" role="alert">
            {pushError}
          </div>
        )}
      </div>
      <div class="notify-test">
        <button
          class="btn small"
          type="button"
          onClick={async () => {
            setTested((await api<{ results: TestResult[] }>("POST", "/api/notifications/test")).results);
          }}
        >
          Send test notification
        </button>
        {tested && (
          <ul class="notify-results">
            {tested.length === 0 && <li>No channel is set up yet.</li>}
            {tested.map((r) => (
              <li class={r.ok ? "ok" : "bad"}>
                {r.channel} ({r.destination}): {r.ok ? "sent" : r.error}
              </li>
            ))}
          </ul>
        )}
      </div>
      <div class="notify-log">
        <h3>
          Delivery log{" "}
          <button class="btn small link" type="button" onClick={() => void load()}>
            Refresh
          </button>
        </h3>
        {deliveries.length === 0 ? (
          <p class="sub">Nothing sent yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>When</th>
                <th>What</th>
                <th>Channel</th>
                <th>Status</th>
                <th>Attempts</th>
                <th>Last error</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((d) => (
                <tr class={`delivery ${d.status}`}>
                  <td>{new Date(d.createdAt).toLocaleString()}</td>
                  <td>
                    <a href={`#/s/${d.sessionId}`}>{d.title}</a>
                  </td>
                  <td title={d.destination}>{d.channel}</td>
                  <td>{d.status}</td>
                  <td>
                    {d.attempts}/{d.maxAttempts}
                  </td>
                  <td>{d.lastError ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
