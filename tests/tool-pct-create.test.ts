// The pct_create tool (src/agent/tools/pct-create.ts): only on a Proxmox node,
// and only when the assent gate allows it.
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();
const input = { node: "pve1", hostname: "web1", ostemplate: "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst" };

describe("pct_create", () => {
  it("refuses a node that is not a Proxmox target, by name", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    expect(await toolRun(deps, ctx, "pct_create", { ...input, node: "nowhere" })).toEqual({
      content: 'node: "nowhere" is not a Proxmox node target',
      isError: true,
      readOnly: true,
    });
  });

  it("outside an assent window creates nothing and asks for a plan", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    const out = await toolRun(deps, ctx, "pct_create", input);
    expect(out).toMatchObject({
      isError: true,
      content: expect.stringMatching(/^pct_create not run: .*Propose a plan whose steps name pve1/),
    });
    expect(await t.db.kysely.selectFrom("targets").select("name").where("name", "=", "web1").executeTakeFirst()).toBeUndefined();
  });
});
