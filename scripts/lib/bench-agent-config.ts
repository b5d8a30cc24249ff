// The configuration every benchmark starts its agent with (startAgent):
// the Messages API double at `modelUrl`, and the service's defaults for the
// rest, so the benchmarks measure the agent main.ts runs.
import type { startAgent } from "../../src/agent/start-agent.js";

export function benchAgentConfig(modelUrl: string): Parameters<typeof startAgent>[0]["config"] {
  return {
    model: { apiKey: "sk-ant-bench", baseUrl: modelUrl, name: "claude-bench", timeoutS: 120 },
    maxIterations: 40,
    assentMinutes: 30,
    approvalMinutes: 60,
  };
}
