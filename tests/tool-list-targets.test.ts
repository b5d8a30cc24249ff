// The list_targets tool (src/agent/tools/list-targets.ts).
import { describe, expect, it } from "vitest";
import { toolRun } from "../src/agent/tool-runner.js";
import { useTestDatabase } from "./helpers/database.js";
import { toolCallSetup } from "./helpers/tool-call.js";

const t = useTestDatabase();

describe("list_targets", () => {
  it("list_targets lists the registry's targets with their kinds", async () => {
    const { deps, ctx } = await toolCallSetup(t);
    expect(await toolRun(deps, ctx, "list_targets", {})).toEqual({ content: "pve1 (proxmox)", isError: false, readOnly: true });
  });
});
