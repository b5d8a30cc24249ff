// `npm run demo`: the whole of Nomos with nothing real behind it, so a
// newcomer with no API key and no Proxmox can watch the flow in a browser.
// It starts the Messages API double with the deployment policy and the
// Proxmox double (pve1) with the deployment scenario, writes a temporary
// targets file naming it, and runs the real service — the same entry
// `npm start` uses, src/main.ts as a child process — with NOMOS_DEMO=1 so
// the page says it is a demo. Without DATABASE_URL the service starts its
// embedded PostgreSQL under ./.nomos-demo (NOMOS_DATA_DIR), apart from a
// real installation's ./.nomos, and starts it afresh on every run: the
// simulated node starts empty each time, so an earlier run's containers
// would be targets pointing at nothing.
//
// The operator: NOMOS_ADMIN_USER/NOMOS_ADMIN_PASSWORD when set; otherwise
// "demo" with a password generated on the first run and kept in the data
// dir, printed at every start.
//
// Ctrl-C (SIGINT) or SIGTERM: the service drains and stops its database,
// then the doubles close and the temporary files go; the exit code is the
// service's. NOMOS_DEMO_PACE scales the simulated durations (default 1;
// 0 runs without pauses, for tests).
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startMessagesDouble } from "../model-double/messages-double.js";
import { deploymentScenario } from "./deployment-host.js";
import { DEPLOY_REQUEST, deploymentPolicy } from "./deployment-policy.js";
import { SshTestHost } from "./proxmox-double.js";

const pace = Number(process.env.NOMOS_DEMO_PACE ?? "1");
if (!Number.isFinite(pace) || pace < 0) {
  process.stderr.write(`NOMOS_DEMO_PACE must be a number of at least 0 (got "${process.env.NOMOS_DEMO_PACE}")\n`);
  process.exit(2);
}
const dataDir = resolve(process.env.NOMOS_DATA_DIR || "./.nomos-demo");
const mainTs = fileURLToPath(new URL("../main.ts", import.meta.url));

async function demoOperator(): Promise<{ username: string; password: string; generated: boolean }> {
  const { NOMOS_ADMIN_USER: username, NOMOS_ADMIN_PASSWORD: password } = process.env;
  if (username && password) return { username, password, generated: false };
  await mkdir(dataDir, { recursive: true });
  const file = join(dataDir, "demo-operator-password");
  const kept = await readFile(file, "utf8").catch(() => undefined);
  if (kept?.trim()) return { username: "demo", password: kept.trim(), generated: true };
  const fresh = randomBytes(9).toString("base64url");
  await writeFile(file, `${fresh}\n`, { mode: 0o600 });
  return { username: "demo", password: fresh, generated: true };
}

if (!process.env.DATABASE_URL) await rm(join(dataDir, "pg"), { recursive: true, force: true });

const host = await SshTestHost.start({ nodeName: "pve1" });
deploymentScenario(host, { registryFailures: 1, upMs: 3000 * pace, installMs: 800 * pace });
const model = await startMessagesDouble({ policy: deploymentPolicy({ eventDelayMs: Math.round(15 * pace) }) });
const targetsFile = join(host.clientKeyPath, "..", "demo-targets.json");
await writeFile(targetsFile, JSON.stringify([host.targetsFileEntry()], null, 2));
const operator = await demoOperator();

const port = process.env.PORT || "8080";
const bind = process.env.HOST || "127.0.0.1";
process.stdout.write(
  [
    "",
    "Nomos demo: a scripted model and a simulated Proxmox node (pve1); no API key, nothing real is touched.",
    `  open      http://${bind}:${port === "0" ? "<the port logged below>" : port}`,
    `  sign in   ${operator.username} / ${operator.generated ? operator.password : "(NOMOS_ADMIN_PASSWORD)"}`,
    `  then ask  ${DEPLOY_REQUEST}`,
    "  approve the plan once and watch it finish on its own. Ctrl-C stops everything.",
    "",
    "",
  ].join("\n"),
);

const child = spawn(process.execPath, ["--import", "tsx", mainTs], {
  stdio: "inherit",
  env: {
    ...process.env,
    NOMOS_DEMO: "1",
    NOMOS_DATA_DIR: dataDir,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: "demo-no-key-needed",
    NOMOS_TARGETS_FILE: targetsFile,
    NOMOS_ADMIN_USER: operator.username,
    NOMOS_ADMIN_PASSWORD: operator.password,
  },
});

let stopping = false;
const stop = (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  // On a terminal's Ctrl-C the child got SIGINT too; a second signal is harmless (its shutdown runs once).
  if (child.exitCode === null && child.signalCode === null) child.kill(signal === "SIGINT" ? "SIGINT" : "SIGTERM");
};
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));

const code = await new Promise<number>((done) => {
  child.once("exit", (exitCode, signal) => done(exitCode ?? (signal ? 1 : 0)));
  child.once("error", (err) => {
    process.stderr.write(`could not start the service: ${err.message}\n`);
    done(1);
  });
});
await model.close();
await host.stop();
process.stdout.write(`Nomos demo stopped (service exit code ${code}).\n`);
process.exit(code);
