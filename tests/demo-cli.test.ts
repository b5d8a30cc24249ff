// `npm run demo`: it starts the doubles and the real service, serves
// /healthz, tells the page it is a demo, creates the demo operator with the
// password it prints, carries the deployment through with one approval,
// and stops everything — service included — on Ctrl-C (SIGINT to its
// process group, as a terminal sends it) with exit code 0.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEPLOY_REQUEST } from "../src/demo/deployment-policy.js";
import { useTestDatabase } from "./helpers/database.js";
import { processAlive, startDemo } from "./helpers/demo-process.js";

const t = useTestDatabase();
const TOKEN = "demo-test-token-0123456789";
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "nomos-demo-test-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("npm run demo", () => {
  it("loads the Proxmox double under Node's own ESM loader, not only under vitest", async () => {
    // ssh2 is CommonJS; Node's loader sees only some of its named exports, so an
    // `import { Server } from "ssh2"` passed every test and broke the demo.
    const script =
      'const { SshTestHost } = await import("./src/demo/proxmox-double.ts"); const h = await SshTestHost.start(); console.log(h.hostKeySha256); await h.stop();';
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
    expect(stdout).toMatch(/^SHA256:\S+\n$/);
  });

  it("serves the demo, runs the scenario from one approval, and stops everything on Ctrl-C", async () => {
    const demo = await startDemo({ DATABASE_URL: t.url, NOMOS_DATA_DIR: dataDir, NOMOS_DEMO_PACE: "0", NOMOS_API_TOKEN: TOKEN });
    try {
      const health = await fetch(`${demo.url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: "ok" });

      const me = (await (await fetch(`${demo.url}/api/me`)).json()) as { notices: string[] };
      expect(me.notices.some((n) => /^This is a demo\./.test(n) && n.includes(DEPLOY_REQUEST))).toBe(true);
      expect(me.notices.join(" ")).not.toMatch(/No model key/);

      // The printed password signs the demo operator in.
      expect(demo.password).not.toBe("");
      const login = await fetch(`${demo.url}/api/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "demo", password: demo.password }),
      });
      expect(login.status).toBe(200);

      // The scripted model and the simulated pve1 carry the deployment through.
      const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        const res = await fetch(`${demo.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        expect(res.status, `${method} ${path}`).toBeLessThan(300);
        return (await res.json()) as T;
      };
      const { id } = await api<{ id: string }>("POST", "/api/sessions", {});
      await api("POST", `/api/sessions/${id}/messages`, { text: DEPLOY_REQUEST });
      let approvalId = "";
      await expect
        .poll(
          async () => {
            const { approvals } = await api<{ approvals: Array<{ id: string }> }>("GET", `/api/approvals?session=${id}&status=pending`);
            approvalId = approvals[0]?.id ?? "";
            return approvals.length;
          },
          { timeout: 20_000 },
        )
        .toBe(1);
      await api("POST", `/api/approvals/${approvalId}`, { decision: "approve" });
      await expect
        .poll(
          async () => {
            const s = await api<{ runningTurn: unknown; messages: Array<{ kind: string; content: Array<{ text?: string }> }> }>(
              "GET",
              `/api/sessions/${id}`,
            );
            const last = s.messages.filter((m) => m.kind === "assistant").at(-1);
            return s.runningTurn === null ? (last?.content.map((b) => b.text ?? "").join("") ?? "") : "";
          },
          { timeout: 60_000, interval: 200 },
        )
        .toMatch(/^Done: TypeType is deployed and verified/);
    } finally {
      await demo.interrupt();
    }
    expect(demo.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    expect(demo.lines.at(-1)).toBe("Nomos demo stopped (service exit code 0).");
    expect(processAlive(demo.servicePid)).toBe(false);
  });
  it("stops on SIGTERM (a process manager's stop) with the service's exit code 0", async () => {
    const demo = await startDemo({ DATABASE_URL: t.url, NOMOS_DATA_DIR: dataDir, NOMOS_DEMO_PACE: "0" }, "node");
    expect((await fetch(`${demo.url}/healthz`)).status).toBe(200);
    expect(await demo.terminate()).toBe(0);
    expect(demo.lines.at(-1)).toBe("Nomos demo stopped (service exit code 0).");
    expect(processAlive(demo.servicePid)).toBe(false);
  });
});
