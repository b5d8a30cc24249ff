// LISTEN behind a connection pooler: DATABASE_URL through Debian's PgBouncer
// in transaction mode (started here on a loopback port), where a LISTEN is
// accepted and then never hears anything. Without NOMOS_DATABASE_LISTEN_URL
// Nomos refuses to start, naming both variables; with it pointing straight
// at PostgreSQL the deployment scenario runs to its end, its continuations
// woken by NOTIFYs that went through the pooler.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DeploymentScenario, deploymentScenario } from "../src/demo/deployment-host.js";
import { deploymentPolicy } from "../src/demo/deployment-policy.js";
import { type MessagesDouble, startMessagesDouble } from "../src/model-double/messages-double.js";
import { useTestDatabase } from "./helpers/database.js";
import { askAndApprove, finished, httpApi, textOf } from "./helpers/deployment-run.js";
import { PGBOUNCER_PATH, type PgBouncer, pgbouncerAvailable, startPgBouncer } from "./helpers/pgbouncer.js";
import { type ServiceProcess, startService } from "./helpers/service-process.js";
import { SshTestHost } from "./helpers/ssh-test-host.js";

const t = useTestDatabase();
const TOKEN = "pooler-token-0123456789abcdef";

// Skipped only when Debian's pgbouncer is not installed (.ci/run installs it).
const suiteName = pgbouncerAvailable()
  ? `LISTEN behind PgBouncer in transaction mode (${PGBOUNCER_PATH})`
  : `LISTEN behind PgBouncer: skipped because ${PGBOUNCER_PATH} is absent (apt-get install -y pgbouncer)`;

describe.skipIf(!pgbouncerAvailable())(suiteName, () => {
  let bouncer: PgBouncer;
  let host: SshTestHost;
  let scenario: DeploymentScenario;
  let model: MessagesDouble;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    bouncer = await startPgBouncer(t.url);
    host = await SshTestHost.start();
    scenario = deploymentScenario(host, { registryFailures: 1, upMs: 400 });
    model = await startMessagesDouble({ policy: deploymentPolicy() });
  });

  afterAll(async () => {
    const code = await service?.stop();
    await model?.close();
    await host?.stop();
    await bouncer?.stop();
    expect(code ?? 0).toBe(0);
  });

  it("without NOMOS_DATABASE_LISTEN_URL, refuses to start deaf, naming both variables", async () => {
    const refused = await startService({ DATABASE_URL: bouncer.url, NOMOS_API_TOKEN: TOKEN }).then(
      () => "started",
      (err: Error) => err.message,
    );
    expect(refused).toMatch(/service exited with 1 before listening/);
    expect(refused).toMatch(/start-up failed: LISTEN does not hear NOTIFY: .*DATABASE_URL.*NOMOS_DATABASE_LISTEN_URL/);
  });

  it("with NOMOS_DATABASE_LISTEN_URL direct, the deployment scenario finishes on its continuations", { timeout: 120_000 }, async () => {
    const targetsFile = join(host.clientKeyPath, "..", "targets.json");
    await writeFile(targetsFile, JSON.stringify([host.targetsFileEntry()]));
    service = await startService({
      DATABASE_URL: bouncer.url,
      NOMOS_DATABASE_LISTEN_URL: t.url,
      ANTHROPIC_BASE_URL: model.url,
      ANTHROPIC_API_KEY: "double-key",
      NOMOS_TARGETS_FILE: targetsFile,
      NOMOS_API_TOKEN: TOKEN,
    });
    const api = httpApi(() => service!.url, TOKEN);
    const { sessionId } = await askAndApprove(api);
    const session = await finished(api, sessionId);
    expect(textOf(session.messages.filter((m) => m.kind === "assistant").at(-1)!)).toMatch(/^Done: TypeType is deployed and verified/);
    const turns = await t.db.kysely
      .selectFrom("turns")
      .select(["kind", "status"])
      .where("session_id", "=", sessionId)
      .orderBy("created_at")
      .execute();
    expect(turns.map((x) => [x.kind, x.status])).toEqual([
      ["operator", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
      ["continuation", "completed"],
    ]);
    const ct = [...host.containers.values()].find((c) => c.hostname === "typetype")!;
    expect(scenario.state(ct.vmid)).toMatchObject({ composeUps: 2, stackUp: true });
  });
});
