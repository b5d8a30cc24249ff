// Approve once, finish alone: the reason Nomos exists, end to end. The real
// service process (src/main.ts, as `npm start` runs it) on a fresh
// PostgreSQL database, the real Anthropic SDK against the Messages API
// double driven by the deployment policy (it decides each step only from
// what the conversation shows), real SSH to the Proxmox double playing pve1
// and the container it creates. Through the HTTP API the operator sends one
// message and approves the plan once; everything after that — installing
// Docker, recovering from Debian's docker.io lacking compose, an async
// `docker compose up` failing with a registry 500 and being retried, the
// check on :8082 — happens with no further operator word, driven by
// continuations. Then failure injection (a compose file looked for at the
// wrong path, corrected inside the same window) and Stop (a result that
// finishes after the window was revoked waits for the operator's next word).
// The service runs as it should in production: its own login role in
// nomos_service, with migrations as the owner (NOMOS_DATABASE_OWNER_URL); and
// at the end, no audit row it wrote lacks an actor.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withActor } from "../src/db/with-actor.js";
import { type DeploymentScenario, deploymentScenario } from "../src/demo/deployment-host.js";
import { CMD, COMPOSE_FILE, DEPLOY_REQUEST, deploymentPolicy } from "../src/demo/deployment-policy.js";
import { type MessagesDouble, startMessagesDouble } from "../src/model-double/messages-double.js";
import { pushSubscriptionSave } from "../src/notifications/push-subscriptions.js";
import { useTestDatabase } from "./helpers/database.js";
import { askAndApprove, finished, httpApi, type Session, textOf } from "./helpers/deployment-run.js";
import { browserPushKeys, type Receiver, startReceiver, until, webhookVerify } from "./helpers/notify-receivers.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const TOKEN = "e2e-token-0123456789abcdef";
const ARTIFACTS = join(import.meta.dirname, "artifacts");
let host: SshTestHost;
let scenario: DeploymentScenario;
let model: MessagesDouble;
let service: ServiceProcess;
let serviceRole: string;
// Issue 16: the operator's notification channels, doubles on loopback (the browser stays closed).
const WEBHOOK_SECRET = "e2e-webhook-secret-0123456789";
const notify: { ntfy?: Receiver; webhook?: Receiver; push?: Receiver } = {};
const pushBrowser = browserPushKeys();

beforeAll(async () => {
  serviceRole = `${t.name}_svc`;
  // With a password: the embedded server (a fresh machine's `npm test`) asks for one.
  await t.db.sql.unsafe(`CREATE ROLE ${serviceRole} LOGIN PASSWORD 'nomos-test-role'`);
  const serviceUrl = new URL(t.url);
  serviceUrl.username = serviceRole;
  serviceUrl.password = "nomos-test-role";
  host = await SshTestHost.start();
  scenario = deploymentScenario(host, { registryFailures: 1, upMs: 400 });
  model = await startMessagesDouble({ policy: deploymentPolicy() });
  const targetsFile = join(host.clientKeyPath, "..", "targets.json");
  await writeFile(targetsFile, JSON.stringify([host.targetsFileEntry()]));
  notify.ntfy = await startReceiver();
  notify.webhook = await startReceiver();
  notify.push = await startReceiver({ okStatus: 201 });
  service = await startService({
    DATABASE_URL: serviceUrl.toString(),
    NOMOS_DATABASE_OWNER_URL: t.url,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "double-key",
    NOMOS_TARGETS_FILE: targetsFile,
    NOMOS_API_TOKEN: TOKEN,
    NOMOS_ADMIN_USER: "homelab-admin",
    NOMOS_ADMIN_PASSWORD: "tangerine orbit kettle",
    NOMOS_NOTIFY_WEBHOOK_URL: notify.webhook.url,
    NOMOS_NOTIFY_WEBHOOK_SECRET: WEBHOOK_SECRET,
    NOMOS_NOTIFY_NTFY_URL: notify.ntfy.url,
  });
  const admin = await t.db.kysely.selectFrom("operators").select("id").where("username", "=", "homelab-admin").executeTakeFirstOrThrow();
  await withActor(t.db.kysely, "operator:homelab-admin", (tx) =>
    pushSubscriptionSave(tx, { operatorId: admin.id, subscription: { endpoint: `${notify.push!.url}/browser`, keys: pushBrowser.keys } }),
  );
});

afterAll(async () => {
  const code = await service?.stop();
  // The service's log, for reading a failure after the fact.
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(join(ARTIFACTS, "deployment-e2e-service.log"), (service?.lines ?? []).map((l) => JSON.stringify(l)).join("\n"));
  await model?.close();
  await host?.stop();
  for (const r of Object.values(notify)) await r.close();
  if (serviceRole) {
    await t.db.sql.unsafe(`DROP OWNED BY ${serviceRole}`);
    await t.db.sql.unsafe(`DROP ROLE IF EXISTS ${serviceRole}`);
  }
  expect(code).toBe(0);
});

const api = httpApi(() => service.url, TOKEN);

/** The commands the container received, in order (the node's own pct/pvesh calls left out). */
const containerCommands = (vmid: number) => host.log.filter((l) => l.vmid === vmid).map((l) => l.command);

async function turnsOf(sessionId: string) {
  return t.db.kysely
    .selectFrom("turns")
    .select(["kind", "status", "input"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();
}

async function executionsOf(sessionId: string) {
  return t.db.kysely
    .selectFrom("executions")
    .select(["id", "target", "command", "mode", "status", "exit_code", "stderr"])
    .where("session_id", "=", sessionId)
    .orderBy("created_at")
    .execute();
}

async function timelineOf(sessionId: string): Promise<string[]> {
  const rows = await t.db.sql<{ what: string }[]>`SELECT what FROM audit.timeline WHERE session_id = ${sessionId} ORDER BY id`;
  return rows.map((r) => r.what);
}

/** Asserts that `lines` contains lines matching `patterns` in this order (others may come between). */
function expectInOrder(lines: string[], patterns: RegExp[]): void {
  let at = 0;
  for (const p of patterns) {
    const found = lines.findIndex((l, i) => i >= at && p.test(l));
    expect(found, `no line matching ${p} after line ${at} in:\n${lines.join("\n")}`).toBeGreaterThanOrEqual(0);
    at = found + 1;
  }
}

describe("approve once, finish alone", () => {
  it("deploys TypeType from one operator message and one approval, recovering on its own", { timeout: 120_000 }, async () => {
    const { sessionId, approvalId } = await askAndApprove(api);
    const session = await finished(api, sessionId);
    const final = textOf(session.messages.filter((m) => m.kind === "assistant").at(-1)!);
    expect(final).toMatch(/^Done: TypeType is deployed and verified/);
    expect(final).toMatch(/get\.docker\.com/);
    expect(final).toMatch(/registry answered 500 on the first attempt/);

    // The transcript: exactly one operator message; the rest came from the system.
    expect(session.messages.filter((m) => m.kind === "operator").map(textOf)).toEqual([DEPLOY_REQUEST]);
    const notes = session.messages.filter((m) => m.kind === "system_note").map(textOf);
    expect(notes).toHaveLength(3);
    expect(notes[0]).toMatch(new RegExp(`approved plan .* \\(approval ${approvalId}\\)`));
    expect(notes[1]).toMatch(/^execution \S+ failed \(exit 1\) on typetype: cd \/opt\/typetype && docker compose up -d/);
    expect(notes[1]).toMatch(/500 Internal Server Error/);
    expect(notes[2]).toMatch(/^execution \S+ completed \(exit 0\) on typetype: cd \/opt\/typetype && docker compose up -d/);

    // One operator turn, then three continuations: the approval, the failure, the success.
    const turns = await turnsOf(sessionId);
    expect(turns.map((x) => [x.kind, x.status])).toEqual([
      ["operator", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
    ]);
    expect(turns.slice(1).map((x) => (x.input as { notes: string[] }).notes.join("\n"))).toEqual(notes);

    // On the host: the container was created, then these ran inside it, in this order.
    const ct = [...host.containers.values()].find((c) => c.hostname === "typetype")!;
    expect(ct.status).toBe("running");
    expect(containerCommands(ct.vmid)).toEqual([
      CMD.installDocker,
      CMD.composeVersion,
      CMD.getDocker,
      CMD.composeVersion,
      CMD.writeCompose,
      CMD.composeUp,
      CMD.composeUp,
      CMD.verify,
    ]);
    expect(scenario.state(ct.vmid)).toMatchObject({ composeUps: 2, stackUp: true });

    // The executions: sync steps inline, the two compose ups async (failed, then completed).
    const executions = await executionsOf(sessionId);
    expect(executions.map((e) => [e.command, e.mode, e.status, e.exit_code])).toEqual([
      [CMD.installDocker, "sync", "completed", 0],
      [CMD.composeVersion, "sync", "failed", 1],
      [CMD.getDocker, "sync", "completed", 0],
      [CMD.composeVersion, "sync", "completed", 0],
      [CMD.writeCompose, "sync", "completed", 0],
      [CMD.composeUp, "async", "failed", 1],
      [CMD.composeUp, "async", "completed", 0],
      [CMD.verify, "sync", "completed", 0],
    ]);
    expect(new Set(executions.map((e) => e.target))).toEqual(new Set(["typetype"]));
    // The async steps really finished after the turn that queued them had ended: only a continuation could tell the agent.
    const asyncEnds = await t.db.kysely
      .selectFrom("executions as e")
      .innerJoin("turns as q", "q.id", "e.turn_id")
      .select(["e.finished_at as executionFinished", "q.finished_at as turnFinished"])
      .where("e.session_id", "=", sessionId)
      .where("e.mode", "=", "async")
      .execute();
    expect(asyncEnds).toHaveLength(2);
    for (const r of asyncEnds) expect(r.executionFinished!.getTime()).toBeGreaterThan(r.turnFinished!.getTime());

    // One approval in the whole session: the plan, by button.
    const approvals = await t.db.kysely
      .selectFrom("approvals")
      .select(["id", "kind", "status", "decided_via"])
      .where("session_id", "=", sessionId)
      .execute();
    expect(approvals).toEqual([{ id: approvalId, kind: "plan", status: "approved", decided_via: "button" }]);

    // audit.timeline tells the story.
    const story = await timelineOf(sessionId);
    expectInOrder(story, [
      /plan/,
      new RegExp(`approval ${approvalId.slice(0, 8)} requested for plan`),
      new RegExp(`approval ${approvalId.slice(0, 8)} approved by .* via button`),
      /execution \S+ on typetype queued as approved \(config_mutation\): apt-get update/,
      /execution \S+ on typetype: running -> failed \(exit 1\)/,
      /execution \S+ on typetype queued as approved \(config_mutation\): cd \/opt\/typetype && docker compose up -d/,
      /execution \S+ on typetype: running -> failed \(exit 1\)/,
      /execution \S+ on typetype queued as approved \(config_mutation\): cd \/opt\/typetype && docker compose up -d/,
      /execution \S+ on typetype: running -> completed \(exit 0\)/,
      /execution \S+ on typetype queued as approved \(read_only\): curl -fsS http:\/\/localhost:8082/,
    ]);
  });

  it("failure injection: a compose up pointed at the wrong path is read, fixed and carried on in the same window", {
    timeout: 120_000,
  }, async () => {
    model.setPolicy(deploymentPolicy({ wrongComposePath: "/srv/typetype/compose.yaml" }));
    const { sessionId } = await askAndApprove(api);
    const session = await finished(api, sessionId);
    const final = textOf(session.messages.filter((m) => m.kind === "assistant").at(-1)!);
    expect(final).toMatch(/^Done: TypeType is deployed and verified/);
    expect(final).toMatch(/wrong path/);
    // "typetype" exists from the first test: the agent read pct_create's refusal and chose another name.
    expect(final).toMatch(/container \*\*typetype-2\*\*/);

    expect(session.messages.filter((m) => m.kind === "operator")).toHaveLength(1);
    const notes = session.messages.filter((m) => m.kind === "system_note").map(textOf);
    expect(notes[1]).toMatch(/^execution \S+ failed \(exit 1\) on typetype-2: docker compose -f \/srv\/typetype\/compose.yaml up -d/);
    expect(notes[1]).toMatch(/open \/srv\/typetype\/compose.yaml: no such file or directory/);

    const ct = [...host.containers.values()].find((c) => c.hostname === "typetype-2")!;
    const commands = containerCommands(ct.vmid);
    const wrong = commands.indexOf(CMD.composeUpFile("/srv/typetype/compose.yaml"));
    expect(wrong).toBeGreaterThan(commands.indexOf(CMD.writeCompose));
    expect(commands.slice(wrong + 1)).toEqual([
      `ls /opt/typetype`,
      CMD.composeUpFile(COMPOSE_FILE),
      CMD.composeUpFile(COMPOSE_FILE),
      CMD.verify,
    ]);
    expect(scenario.state(ct.vmid).stackUp).toBe(true);

    // All inside the one window the single approval opened: no other approval, no operator word.
    const approvals = await t.db.kysely.selectFrom("approvals").select(["kind", "status"]).where("session_id", "=", sessionId).execute();
    expect(approvals).toEqual([{ kind: "plan", status: "approved" }]);
    const windows = await t.db.kysely
      .selectFrom("assent_windows")
      .select(["id", "closed_at"])
      .where("session_id", "=", sessionId)
      .execute();
    expect(windows).toHaveLength(1);
    const turns = await turnsOf(sessionId);
    expect(turns.filter((x) => x.kind === "operator")).toHaveLength(1);
    expect(turns.every((x) => x.status === "completed")).toBe(true);
  });
  it("Stop: the step still running is killed, and its cancelled result waits for the operator's next message", {
    timeout: 120_000,
  }, async () => {
    model.setPolicy(deploymentPolicy());
    // Hold the next container's compose up on the host until the operator has pressed Stop
    // (only that container's: the handler stays installed for the tests after this one).
    const before = new Set(host.containers.keys());
    const held = (vmid: number) => vmid === [...host.containers.keys()].find((v) => !before.has(v));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let upStarted!: () => void;
    const started = new Promise<void>((resolve) => (upStarted = resolve));
    host.handle(
      (command, vmid) => vmid !== null && held(vmid) && /docker compose up -d$/.test(command),
      async (ctx) => {
        upStarted();
        await gate;
        scenario.state(ctx.vmid!).stackUp = true;
        ctx.err(" Container typetype-app-1  Started\n");
        return 0;
      },
    );
    try {
      const { sessionId } = await askAndApprove(api);
      await started;
      // The turn that queued it has ended; nothing runs but the command on the host.
      await expect
        .poll(async () => (await api<Session>("GET", `/api/sessions/${sessionId}`)).json.runningTurn, { timeout: 20_000 })
        .toBeNull();
      const stopped = await api<{ assent: { open: boolean }; stopped: string }>("DELETE", `/api/sessions/${sessionId}/assent`);
      expect(stopped.status).toBe(200);
      expect(stopped.json.assent.open).toBe(false);
      // Stop cancels the running step: the host is told to kill it (issue 13).
      expect(stopped.json.stopped).toBe(
        `Stopped by api-token: cancelled 1 running step (${CMD.composeUp} on typetype-3). The assent window is closed: nothing runs on its own, and every change asks again.`,
      );
      // The runner kills the remote process once it hears the cancel; only then may the held
      // command go on (released earlier, it could finish with 0 before the kill reached it).
      await expect.poll(() => host.kills.some((k) => k.command.includes("docker compose up")), { timeout: 20_000 }).toBe(true);
      release();
      const up = async () => (await executionsOf(sessionId)).find((e) => e.command === CMD.composeUp);
      await expect.poll(async () => (await up())?.status, { timeout: 20_000 }).toBe("cancelled");

      // The operator speaks next; the result that waited comes with those words, not before.
      expect((await api("POST", `/api/sessions/${sessionId}/messages`, { text: "What happened?" })).status).toBe(202);
      let session: Session | undefined;
      await expect
        .poll(
          async () => {
            session = (await api<Session>("GET", `/api/sessions/${sessionId}`)).json;
            return (
              session.runningTurn === null &&
              session.messages.at(-1)?.kind === "assistant" &&
              /^While no assent window was open/.test(textOf(session.messages.at(-1)!))
            );
          },
          { timeout: 20_000, interval: 150 },
        )
        .toBe(true);
      const execution = (await up())!;
      expect(textOf(session!.messages.at(-1)!)).toContain(`\`${CMD.composeUp}\` on typetype-3: cancelled (exit 143)`);
      const turns = await turnsOf(sessionId);
      expect(turns.map((x) => [x.kind, x.status])).toEqual([
        ["operator", "completed"],
        ["continuation", "completed"],
        ["operator", "completed"],
      ]);
      const lastOperatorTurn = session!.messages.filter((m) => m.kind === "operator").at(-1)!.turnId;
      const carried = session!.messages
        .filter((m) => m.kind === "system_note" && m.turnId === lastOperatorTurn)
        .map(textOf)
        .join("\n");
      expect(carried).toContain(`execution ${execution.id} cancelled (exit 143) on typetype-3`);
      const ledger = await t.db.kysely
        .selectFrom("nomos_plan_executions")
        .select(["delivered_turn_id"])
        .where("execution_id", "=", execution.id)
        .executeTakeFirstOrThrow();
      expect(ledger.delivered_turn_id).toBe(lastOperatorTurn);
    } finally {
      release();
    }
  });
  it("a background step that finishes while the turn that queued it is still running is delivered once, after that turn", {
    timeout: 120_000,
  }, async () => {
    // Force the race: the model's closing words of the turn that queued a
    // compose up are held until that execution has finished on the host.
    const policy = deploymentPolicy();
    model.setPolicy(async (req) => {
      const reply = await policy(req);
      const last = JSON.stringify(req.messages.at(-1)?.content ?? "");
      const queued = /execution ([0-9a-f-]{36}) queued/.exec(last);
      if (!queued) return reply;
      const terminal = async () => {
        // A guard (30 s), so a failing run cannot hold the double forever.
        for (const giveUp = Date.now() + 30_000; Date.now() < giveUp; ) {
          const e = await t.db.kysely.selectFrom("executions").select("status").where("id", "=", queued[1]!).executeTakeFirstOrThrow();
          if (e.status === "completed" || e.status === "failed") return;
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      return { ...reply, hold: terminal() };
    });
    const { sessionId } = await askAndApprove(api);
    const session = await finished(api, sessionId);
    expect(textOf(session.messages.filter((m) => m.kind === "assistant").at(-1)!)).toMatch(/^Done: TypeType is deployed and verified/);

    const rows = await t.db.kysely
      .selectFrom("executions as e")
      .innerJoin("turns as q", "q.id", "e.turn_id")
      .innerJoin("nomos_plan_executions as l", "l.execution_id", "e.id")
      .select(["e.id", "e.status", "e.finished_at as executionFinished", "q.finished_at as queuedTurnFinished", "l.delivered_turn_id"])
      .where("e.session_id", "=", sessionId)
      .where("e.mode", "=", "async")
      .orderBy("e.created_at")
      .execute();
    expect(rows.map((r) => r.status)).toEqual(["failed", "completed"]);
    const turns = await t.db.kysely
      .selectFrom("turns")
      .select(["id", "kind", "status", "started_at"])
      .where("session_id", "=", sessionId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    expect(turns.map((x) => [x.kind, x.status])).toEqual([
      ["operator", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
    ]);
    for (const r of rows) {
      // The race happened: the result was in before the turn that queued it ended...
      expect(r.executionFinished!.getTime()).toBeLessThanOrEqual(r.queuedTurnFinished!.getTime());
      // ...and was delivered exactly once, to a continuation that started after that turn.
      const delivered = turns.find((x) => x.id === r.delivered_turn_id)!;
      expect(delivered.kind).toBe("continuation");
      expect(delivered.started_at!.getTime()).toBeGreaterThanOrEqual(r.queuedTurnFinished!.getTime());
    }
    expect(new Set(rows.map((r) => r.delivered_turn_id)).size).toBe(2);
  });
});

/** No delivery is waiting or being sent: every notification so far reached its channels (or gave up). */
async function deliveriesSettled(): Promise<boolean> {
  const open = await t.db.kysely.selectFrom("notification_deliveries").select("id").where("status", "in", ["pending", "sending"]).execute();
  return open.length === 0;
}

describe("notifications with the browser closed (issue 16)", () => {
  it("every plan approval reached ntfy, the webhook and Web Push exactly once each, with a link that opens the session", async () => {
    const plans = await t.db.kysely.selectFrom("approvals").select(["id", "session_id"]).where("kind", "=", "plan").execute();
    expect(plans.length).toBeGreaterThanOrEqual(3);
    await until("the approval notifications delivered", deliveriesSettled);
    const approvalsSent = (r: Receiver, decode: (body: Buffer) => Record<string, string>) =>
      r.requests.map((q) => decode(q.body)).filter((p) => p.type === "approval_requested");
    const webhook = approvalsSent(notify.webhook!, (b) => JSON.parse(b.toString("utf8")));
    const push = approvalsSent(notify.push!, (b) => JSON.parse(pushBrowser.decrypt(b)));
    for (const q of notify.webhook!.requests)
      expect(webhookVerify(q.body, q.headers["x-nomos-signature"] as string, WEBHOOK_SECRET)).toBe(true);
    const links = plans.map((p) => `${service.url}/#/s/${p.session_id}`).sort();
    expect(webhook.map((p) => p.url).sort()).toEqual(links);
    expect(push.map((p) => p.url).sort()).toEqual(links);
    expect(new Set(webhook.map((p) => p.id)).size).toBe(plans.length);
    expect(push.map((p) => p.id).sort()).toEqual(webhook.map((p) => p.id).sort());
    const ntfy = notify.ntfy!.requests.filter((q) => String(q.headers.tags).includes("approval_requested"));
    expect(ntfy.map((q) => q.headers.click).sort()).toEqual(links);
    expect(ntfy.every((q) => q.headers.priority === "high")).toBe(true);
    // The link works: its origin serves the page, whose hash names a session the API knows.
    const link = new URL(links[0]!);
    const page = await fetch(new URL("/", link));
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/\/assets\/app\.[0-9a-f]+\.js/);
    expect((await api("GET", `/api/sessions/${link.hash.slice("#/s/".length)}`)).status).toBe(200);
  });

  it("every verified plan reached ntfy, the webhook and Web Push as 'plan finished' exactly once each", async () => {
    const verified = await t.db.kysely.selectFrom("plans").select(["id", "session_id"]).where("outcome", "=", "verified").execute();
    // The deployment scenario ends its plan with report_outcome (the demo policy does).
    expect(verified.length).toBeGreaterThanOrEqual(1);
    await until("the finished-plan notifications delivered", deliveriesSettled);
    const links = verified.map((p) => `${service.url}/#/s/${p.session_id}`).sort();
    const finishedSent = (r: Receiver, decode: (body: Buffer) => Record<string, string>) =>
      r.requests.map((q) => decode(q.body)).filter((p) => p.type === "plan_finished");
    const webhook = finishedSent(notify.webhook!, (b) => JSON.parse(b.toString("utf8")));
    const push = finishedSent(notify.push!, (b) => JSON.parse(pushBrowser.decrypt(b)));
    expect(webhook.map((p) => p.url).sort()).toEqual(links);
    expect(push.map((p) => p.url).sort()).toEqual(links);
    expect(new Set(webhook.map((p) => p.id)).size).toBe(verified.length);
    const ntfy = notify.ntfy!.requests.filter((q) => String(q.headers.tags).includes("plan_finished"));
    expect(ntfy.map((q) => q.headers.click).sort()).toEqual(links);
  });
});

describe("the audit trail of the whole run", () => {
  it("names an actor for every write the service made (none falls back to db:<role>), and the service was no owner", async () => {
    const anonymous = await t.db.kysely
      .selectFrom("audit.events")
      .select(["table_name", "operation", "changed_columns", "actor"])
      .where("actor", "like", "db:%")
      .execute();
    expect(anonymous).toEqual([]);
    const actors = await t.db.kysely.selectFrom("audit.events").select("actor").distinct().execute();
    expect(actors.length).toBeGreaterThan(3);
    expect(service.lines.some((l) => /could rewrite the audit trail/.test(String(l.msg)))).toBe(false);
  });
});
