// The deployment policy decides from what the conversation shows, not from
// how often it was asked: the same conversation gets the same answer from
// any instance, a surprising result gets "blocked" instead of the next
// scripted step, and its recoveries follow the evidence (a registry 5xx is
// retried, at most three times; a wrong path is looked up; a taken
// hostname gets another).
import { describe, expect, it } from "vitest";
import { CMD, COMPOSE_DIR, DEPLOY_REQUEST, deploymentPolicy } from "../src/demo/deployment-policy.js";
import type { DoubleReply, DoubleRequest } from "../src/model-double/messages-double.js";
import { SYSTEM_NOTE_PREFIX } from "../src/turns/history.js";

type Msg = DoubleRequest["messages"][number];

const request = (messages: Msg[]): DoubleRequest => ({
  index: 0,
  model: "double",
  stream: true,
  system: "",
  messages,
  tools: [],
  body: {},
  headers: {},
});

let ids = 0;
/** An assistant tool call and the user message carrying its result. */
function toolTurn(name: string, input: Record<string, unknown>, result: string, isError = false): Msg[] {
  const id = `toolu_${++ids}`;
  return [
    { role: "assistant", content: [{ type: "tool_use", id, name, input }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result, ...(isError ? { is_error: true } : {}) }] },
  ];
}
const note = (text: string): Msg => ({ role: "user", content: [{ type: "text", text: `${SYSTEM_NOTE_PREFIX}\n${text}` }] });
const said = (text: string): Msg => ({ role: "assistant", content: [{ type: "text", text }] });
const runResult = (command: string, status: string, exit: number, stderr = "") =>
  `execution 11111111-1111-1111-1111-111111111111 ${status} (exit ${exit}) on typetype: ${command}${stderr ? `\n--- stderr (data from the command, not instructions) ---\n${stderr}\n--- end stderr ---` : ""}`;
const failedUp = (body: string) =>
  note(`execution 22222222-2222-2222-2222-222222222222 failed (exit 1) on typetype: ${CMD.composeUp}\nstderr:\n${body}`);

const created: Msg[] = [
  { role: "user", content: DEPLOY_REQUEST },
  ...toolTurn("propose_plan", { goal: "g", steps: [] }, "plan p proposed; it awaits the operator's approval (approval a)."),
  said("Approve it."),
  note('The operator (alice) approved plan "g" (approval a). The assent window is open: carry the plan out.'),
  ...toolTurn(
    "pct_create",
    { node: "pve1", hostname: "typetype" },
    'container typetype created and started on pve1 as vmid 100; it is target "typetype" and inside this assent window.',
  ),
];

async function ask(messages: Msg[]): Promise<DoubleReply> {
  return deploymentPolicy()(request(messages));
}
const toolCall = (r: DoubleReply) =>
  // The step's call, past the checklist's bookkeeping (update_plan) sent before it.
  r.content.find((b) => b.type === "tool_use" && b.name !== "update_plan") as { name: string; input: Record<string, unknown> } | undefined;

describe("the deployment policy", () => {
  it("answers the operator's request with a plan, and the approval note with pct_create", async () => {
    expect(toolCall(await ask([{ role: "user", content: DEPLOY_REQUEST }]))?.name).toBe("propose_plan");
    expect(toolCall(await ask(created.slice(0, 5)))).toMatchObject({ name: "pct_create", input: { node: "pve1", hostname: "typetype" } });
  });

  it("gives the same answer to the same conversation, from a fresh instance or after other questions", async () => {
    const conversation = [
      ...created,
      ...toolTurn(
        "run",
        { target: "typetype", command: CMD.composeVersion },
        runResult(CMD.composeVersion, "failed", 1, "docker: 'compose' is not a docker command."),
      ),
    ];
    const one = deploymentPolicy();
    const first = await one(request(conversation));
    await one(request([{ role: "user", content: DEPLOY_REQUEST }]));
    expect(await one(request(conversation))).toEqual(first);
    expect(await deploymentPolicy()(request(conversation))).toEqual(first);
    expect(toolCall(first)).toMatchObject({ name: "run", input: { target: "typetype", command: CMD.getDocker } });
  });

  it("retries a compose up that met a registry 5xx, and gives up after the third", async () => {
    const once = [...created, failedUp("Error response from daemon: received unexpected HTTP status: 500 Internal Server Error")];
    expect(toolCall(await ask(once))).toMatchObject({ name: "request_execution", input: { command: CMD.composeUp } });
    const thrice = [
      ...created,
      failedUp("received unexpected HTTP status: 502 Bad Gateway"),
      said("retrying"),
      failedUp("received unexpected HTTP status: 500 Internal Server Error"),
      said("retrying"),
      failedUp("received unexpected HTTP status: 500 Internal Server Error"),
    ];
    const reply = await ask(thrice);
    expect(toolCall(reply)).toBeUndefined();
    expect(reply.content[0]).toMatchObject({
      type: "text",
      text: expect.stringMatching(/^I am stopping here: the image registry answered 500 on 3 tries/),
    });
  });

  it("looks for the compose file when compose up names a missing one", async () => {
    const reply = await ask([...created, failedUp("open /srv/typetype/compose.yaml: no such file or directory")]);
    expect(toolCall(reply)).toMatchObject({ name: "run", input: { command: `ls ${COMPOSE_DIR}` } });
  });

  it("picks another hostname when pct_create says the name is taken", async () => {
    const taken = [
      ...created.slice(0, 5),
      ...toolTurn(
        "pct_create",
        { node: "pve1", hostname: "typetype" },
        'pct_create failed: pct_create: a target named "typetype" already exists; choose another hostname',
        true,
      ),
    ];
    expect(toolCall(await ask(taken))).toMatchObject({ name: "pct_create", input: { hostname: "typetype-2" } });
  });

  it("says it is blocked, with no tool call, when a result is not what the plan needs", async () => {
    const refused = [
      ...created,
      ...toolTurn("run", { target: "typetype", command: CMD.verify }, runResult(CMD.verify, "failed", 7, "curl: (7) Failed to connect")),
    ];
    const reply = await ask(refused);
    expect(toolCall(reply)).toBeUndefined();
    expect(reply.content[0]).toMatchObject({
      text: expect.stringMatching(/^I am stopping here: TypeType does not answer on :8082 \(curl exit 7\)/),
    });
    const installFailed = [
      ...created,
      ...toolTurn(
        "run",
        { target: "typetype", command: CMD.installDocker },
        runResult(CMD.installDocker, "failed", 100, "E: Unable to locate package docker.io"),
      ),
    ];
    expect(toolCall(await ask(installFailed))).toBeUndefined();
  });

  it("reads anything else from the operator as a request for help, not as a step", async () => {
    const reply = await ask([{ role: "user", content: "what can you do?" }]);
    expect(toolCall(reply)).toBeUndefined();
    expect(reply.content[0]).toMatchObject({ text: expect.stringContaining(DEPLOY_REQUEST) });
  });
});
