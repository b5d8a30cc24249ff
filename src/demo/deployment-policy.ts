// A scripted model for the deployment scenario (the end-to-end test and
// `npm run demo`): asked to deploy TypeType in a new container on pve1 and
// verify it on :8082, it plans, waits for approval, then carries the plan
// out the way a careful operator would, recovering from what goes wrong.
//
// Invariant: every decision is a function of what the conversation shows —
// the newest tool result, system note or operator words, read against the
// tool calls that produced them. There is no step counter and no memory
// outside the request, so a replayed conversation gets the same answer and
// a result the scenario did not expect gets an honest "blocked" reply
// instead of the next scripted step.
//
// The plan's checklist is kept true as the work goes (issue 16): each
// command names the plan step it serves (`step`), and a step whose evidence
// is seen is marked done with update_plan, sent first in the same reply as
// the next step's call.
//
//   operator "deploy TypeType ..."          -> propose_plan
//   propose_plan result                     -> "approve it" (end turn)
//   note "approved plan" / operator "go"    -> pct_create typetype on pve1
//   pct_create "already exists"             -> pct_create typetype-2 (-3, ...)
//   pct_create ok                           -> run apt-get install docker.io
//   docker.io installed                     -> run docker compose version
//   "'compose' is not a docker command"     -> run curl get.docker.com | sh
//   get.docker.com done                     -> run docker compose version
//   compose version ok                      -> write the compose file
//   compose file written                    -> request_execution compose up (async; end turn)
//   note: compose up failed, registry 5xx   -> request_execution compose up again (at most 3 times)
//   note: compose up failed, no such file   -> run ls <the directory it wrote to>
//   ls shows compose.yaml                   -> request_execution compose up -f <that file>
//   operator words carrying results that
//   finished while no window was open       -> lists them, acts on none
//   note: compose up completed              -> run curl :8082
//   curl answers                            -> report_outcome verified
//   report_outcome recorded                 -> final report
//   anything else                           -> says what it saw and that it is blocked

import { executionNoteExitCode } from "../executions/execution-note.js";
import type { DoublePolicy, DoubleReply, DoubleRequest } from "../model-double/messages-double.js";
import { requestBlocks, requestText } from "../model-double/request-blocks.js";
import type { DoubleBlock } from "../model-double/wire.js";
import { SYSTEM_NOTE_PREFIX } from "../turns/history.js";

export interface DeploymentPolicyOptions {
  /** The Proxmox node to deploy on (default pve1). */
  node?: string;
  /** The first `docker compose up` points at this compose file instead of the one written (failure injection). */
  wrongComposePath?: string;
  /** Pace of the streamed reply, so a person watching the demo can follow (default 0). */
  eventDelayMs?: number;
}

export const APP = "typetype";
export const APP_PORT = 8082;
export const COMPOSE_DIR = "/opt/typetype";
export const COMPOSE_FILE = `${COMPOSE_DIR}/compose.yaml`;
export const OSTEMPLATE = "local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst";
export const COMPOSE_YAML = [
  "services:",
  "  app:",
  "    image: ghcr.io/typetype/typetype:latest",
  "    ports:",
  `      - "${APP_PORT}:8080"`,
  "    restart: unless-stopped",
].join("\n");

export const CMD = {
  installDocker: "apt-get update && apt-get install -y docker.io",
  composeVersion: "docker compose version",
  getDocker: "curl -fsSL https://get.docker.com | sh",
  writeCompose: `mkdir -p ${COMPOSE_DIR} && cat > ${COMPOSE_FILE} <<'EOF'\n${COMPOSE_YAML}\nEOF`,
  composeUp: `cd ${COMPOSE_DIR} && docker compose up -d`,
  composeUpFile: (file: string) => `docker compose -f ${file} up -d`,
  verify: `curl -fsS http://localhost:${APP_PORT}`,
};

/** What the operator can type in the demo to start the scenario. */
export const DEPLOY_REQUEST = `Deploy TypeType in a new container on pve1 and verify it answers on :${APP_PORT}.`;

type Json = Record<string, unknown>;

interface ToolObservation {
  kind: "tool";
  name: string;
  input: Json;
  text: string;
  isError: boolean;
}
interface ExecutionNote {
  id: string;
  status: string;
  exitCode: number | null;
  target: string;
  command: string;
  body: string;
}
type Observation =
  | ToolObservation
  | { kind: "note"; text: string; executions: ExecutionNote[] }
  | { kind: "operator"; text: string; executions: ExecutionNote[] };

/** Every tool call of the conversation with its result, oldest first. */
function toolCalls(req: DoubleRequest): ToolObservation[] {
  const calls = new Map<string, { name: string; input: Json }>();
  const out: ToolObservation[] = [];
  for (const m of req.messages) {
    for (const b of requestBlocks(m.content)) {
      if (m.role === "assistant" && b.type === "tool_use" && b.id) calls.set(b.id, { name: b.name ?? "", input: b.input ?? {} });
      if (m.role === "user" && b.type === "tool_result" && b.tool_use_id) {
        const call = calls.get(b.tool_use_id);
        if (call) out.push({ kind: "tool", ...call, text: requestText(b.content), isError: b.is_error === true });
      }
    }
  }
  return out;
}

const NOTE_LINE = /^execution (\S+) (completed|failed|timed_out|cancelled|lost)(?: \((?:exit (\d+)|signal \w+)\))? on (\S+): (.*)$/;

/** The execution notes in a system note's text, each with the lines that follow it. */
function executionNotes(text: string): ExecutionNote[] {
  const notes: ExecutionNote[] = [];
  for (const line of text.split("\n")) {
    const m = NOTE_LINE.exec(line);
    if (m)
      notes.push({ id: m[1]!, status: m[2]!, exitCode: m[3] === undefined ? null : Number(m[3]), target: m[4]!, command: m[5]!, body: "" });
    else if (notes.length > 0) notes.at(-1)!.body += `${line}\n`;
  }
  return notes;
}

/** The newest thing the model is answering: a tool result, a system note, or the operator's words. */
function observe(req: DoubleRequest): Observation {
  const last = req.messages.at(-1);
  const blocks = last?.role === "user" ? requestBlocks(last.content) : [];
  if (blocks.some((b) => b.type === "tool_result")) {
    // The checklist's bookkeeping is not an observation of the work.
    const latest = toolCalls(req)
      .filter((c) => c.name !== "update_plan")
      .at(-1);
    if (latest) return latest;
  }
  const texts = blocks.filter((b) => b.type === "text").map((b) => b.text ?? "");
  const operator = texts
    .filter((t) => !t.startsWith(SYSTEM_NOTE_PREFIX))
    .join("\n")
    .trim();
  const note = texts
    .filter((t) => t.startsWith(SYSTEM_NOTE_PREFIX))
    .map((t) => t.slice(SYSTEM_NOTE_PREFIX.length).trim())
    .join("\n");
  if (operator !== "") return { kind: "operator", text: operator, executions: executionNotes(note) };
  return { kind: "note", text: note, executions: executionNotes(note) };
}

const say = (text: string, delay: number): DoubleReply => ({ content: [{ type: "text", text }], eventDelayMs: delay });
const call = (text: string, name: string, input: Json, delay: number): DoubleReply => ({
  content: [{ type: "text", text }, { type: "tool_use", name, input } as DoubleBlock],
  eventDelayMs: delay,
});

/** The plan's steps (1-based, as proposed below). */
const STEP = { create: 1, docker: 2, compose: 3, up: 4, verify: 5 } as const;

/** The same reply, first marking plan steps with update_plan. */
const marking = (reply: DoubleReply, steps: Array<{ step: number; status: "running" | "done" | "failed" | "skipped"; note?: string }>) => {
  const [first, ...rest] = reply.content;
  return { ...reply, content: [first!, { type: "tool_use", name: "update_plan", input: { steps } } as DoubleBlock, ...rest] };
};

export function deploymentPolicy(options: DeploymentPolicyOptions = {}): DoublePolicy {
  const node = options.node ?? "pve1";
  const d = options.eventDelayMs ?? 0;

  return (req) => {
    const seen = observe(req);
    const calls = toolCalls(req);
    /** The container the conversation shows was created (the newest pct_create that succeeded). */
    const container = calls
      .filter((c) => c.name === "pct_create" && !c.isError)
      .map((c) => /it is target "([^"]+)"/.exec(c.text)?.[1])
      .filter((n): n is string => n !== undefined)
      .at(-1);
    const planned = calls.some((c) => c.name === "propose_plan" && !c.isError);
    const createContainer = (hostname: string, why: string) =>
      marking(
        call(
          why,
          "pct_create",
          { node, hostname, ostemplate: OSTEMPLATE, cores: 2, memory_mb: 2048, disk_gb: 8, nesting: true, keyctl: true },
          d,
        ),
        [{ step: STEP.create, status: "running" }],
      );
    const runOn = (text: string, command: string, tool: "run" | "request_execution" = "run", description?: string, step?: number) =>
      call(text, tool, { target: container ?? APP, command, ...(description ? { description } : {}), ...(step ? { step } : {}) }, d);
    const blocked = (what: string) =>
      say(`I am stopping here: ${what} This is not something I can fix from the plan; tell me how you want to proceed.`, d);

    if (seen.kind === "operator") {
      if (/\b(deploy|install)\b/i.test(seen.text) && /typetype/i.test(seen.text)) {
        return call(
          `I'll deploy TypeType in a new Debian container on ${node}: create the container, install Docker with Compose, write the compose file, bring the stack up, and check that :${APP_PORT} answers. Here is the plan for your approval.`,
          "propose_plan",
          {
            goal: `TypeType runs in a new container on ${node} and answers on :${APP_PORT}`,
            steps: [
              { title: `Create and start a Debian 12 container "${APP}" on ${node} (nesting for Docker)`, target: node },
              { title: "Install Docker and the Compose plugin", target: APP, command: CMD.installDocker },
              { title: `Write ${COMPOSE_FILE} for TypeType on port ${APP_PORT}`, target: APP },
              { title: "Bring the stack up with docker compose", target: APP, command: CMD.composeUp },
              { title: `Verify http://localhost:${APP_PORT} answers`, target: APP, command: CMD.verify },
            ],
          },
          d,
        );
      }
      if (planned && !container && /\b(go ahead|proceed|continue|approved?|yes|do it)\b/i.test(seen.text)) {
        return createContainer(APP, "Going ahead: creating the container first.");
      }
      if (seen.executions.length > 0) {
        const lines = seen.executions.map(
          (e) => `- \`${e.command}\` on ${e.target}: ${e.status}${e.exitCode === null ? "" : ` (exit ${e.exitCode})`}`,
        );
        return say(
          `While no assent window was open, these finished; I have not acted on them:\n${lines.join("\n")}\n\nApprove a plan again if you want me to carry on.`,
          d,
        );
      }
      return say(`I am the scripted demo model; I know one job. Ask me: "${DEPLOY_REQUEST}"`, d);
    }

    if (seen.kind === "note") {
      if (/rejected plan/.test(seen.text)) return say("Understood: the plan is rejected, so I will not deploy anything.", d);
      const failed = seen.executions.find((e) => e.status !== "completed");
      const done = seen.executions.find((e) => e.status === "completed");
      if (failed && /docker compose .*up -d/.test(failed.command)) {
        const registry500s = req.messages
          .flatMap((m) => (m.role === "user" ? requestBlocks(m.content) : []))
          .filter((b) => b.type === "text" && /unexpected HTTP status: 5\d\d/.test(b.text ?? "")).length;
        if (/unexpected HTTP status: 5\d\d/.test(failed.body)) {
          if (registry500s >= 3) return blocked(`the image registry answered 500 on ${registry500s} tries in a row.`);
          return runOn(
            `The image pull failed (exit ${failed.exitCode}): the registry answered 500 Internal Server Error, a server-side fault that is usually transient. Retrying the same step.`,
            failed.command,
            "request_execution",
            "Retry: bring the TypeType stack up",
            STEP.up,
          );
        }
        const missing = /open (\S+): no such file or directory/.exec(failed.body);
        if (missing) {
          return runOn(
            `Compose could not find ${missing[1]}: I pointed it at the wrong path. I wrote the compose file under ${COMPOSE_DIR}; checking what is there.`,
            `ls ${COMPOSE_DIR}`,
            "run",
            undefined,
            STEP.up,
          );
        }
        return blocked(`\`${failed.command}\` ${failed.status} (exit ${failed.exitCode}):\n${failed.body.trim()}`);
      }
      if (failed) return blocked(`\`${failed.command}\` ${failed.status} (exit ${failed.exitCode}).`);
      if (done && /docker compose .*up -d/.test(done.command)) {
        return marking(
          runOn(`The stack is up. Checking that TypeType answers on :${APP_PORT}.`, CMD.verify, "run", undefined, STEP.verify),
          [{ step: STEP.up, status: "done" }],
        );
      }
      if (/approved plan/.test(seen.text) && !container) {
        return createContainer(APP, `Approved. Creating the container "${APP}" on ${node}.`);
      }
      return say(`Noted. ${seen.text.split("\n")[0]}`, d);
    }

    // A tool result of this turn.
    const { name, input, text } = seen;
    if (name === "propose_plan") {
      return say("The plan is ready above. Approve it once and I will carry it out to the end, reporting as I go.", d);
    }
    if (name === "pct_create") {
      const taken = /a target named "([^"]+)" already exists/.exec(text) ?? /CT \d+ already exists/.exec(text);
      if (seen.isError && taken) {
        const previous = String(input.hostname ?? APP);
        const m = /^(.*?)-(\d+)$/.exec(previous);
        const next = m ? `${m[1]}-${Number(m[2]) + 1}` : `${previous}-2`;
        return createContainer(next, `"${previous}" is taken; creating "${next}" instead.`);
      }
      if (seen.isError || !container) return blocked(`creating the container failed: ${text}`);
      return marking(
        runOn(
          `Container ${container} is running. Installing Docker from Debian's packages.`,
          CMD.installDocker,
          "run",
          undefined,
          STEP.docker,
        ),
        [{ step: STEP.create, status: "done", note: `container ${container}` }],
      );
    }
    if (name === "request_execution") {
      if (/queued/.test(text)) {
        return say("The stack is coming up in the background. I will be re-invoked with the result when it finishes.", d);
      }
      return say(`That step waits for your approval: ${text.split("\n")[0]}`, d);
    }
    if (name === "report_outcome") {
      if (seen.isError) return blocked(`reporting the outcome failed: ${text.slice(0, 300)}`);
      return say(finalReport(req, container ?? APP, node), d);
    }
    if (name !== "run") return blocked(`an unexpected result from ${name}: ${text.slice(0, 300)}`);
    if (/^Not run:/.test(text)) return say(`That step waits for your approval: ${text.split(".")[0]}.`, d);

    const command = String(input.command ?? "");
    const exit = executionNoteExitCode(text);
    const ok = exit === 0;
    if (command === CMD.installDocker) {
      if (!ok) return blocked(`installing docker.io failed (exit ${exit}).`);
      return runOn("docker.io is installed. Checking that Docker Compose is available.", CMD.composeVersion, "run", undefined, STEP.docker);
    }
    if (command === CMD.composeVersion) {
      if (ok)
        return marking(runOn(`Docker Compose is available. Writing ${COMPOSE_FILE}.`, CMD.writeCompose, "run", undefined, STEP.compose), [
          { step: STEP.docker, status: "done" },
        ]);
      if (/'compose' is not a docker command/.test(text)) {
        return runOn(
          "Debian's docker.io package has no Compose plugin ('compose' is not a docker command). Installing Docker from get.docker.com, which ships the plugin.",
          CMD.getDocker,
          "run",
          undefined,
          STEP.docker,
        );
      }
      return blocked(`\`${command}\` failed (exit ${exit}).`);
    }
    if (command === CMD.getDocker) {
      if (!ok) return blocked(`the get.docker.com installer failed (exit ${exit}).`);
      return runOn("Docker from get.docker.com is installed. Checking Compose again.", CMD.composeVersion, "run", undefined, STEP.docker);
    }
    if (command === CMD.writeCompose) {
      if (!ok) return blocked(`writing ${COMPOSE_FILE} failed (exit ${exit}).`);
      const up = options.wrongComposePath ? CMD.composeUpFile(options.wrongComposePath) : CMD.composeUp;
      return marking(
        runOn(
          "Compose file written. Bringing the stack up; pulling the image takes a while, so this runs in the background.",
          up,
          "request_execution",
          "Bring the TypeType stack up",
          STEP.up,
        ),
        [{ step: STEP.compose, status: "done" }],
      );
    }
    if (command === `ls ${COMPOSE_DIR}`) {
      if (ok && /\bcompose\.yaml\b/.test(text)) {
        return runOn(
          `${COMPOSE_FILE} is there. Bringing the stack up with the right file.`,
          CMD.composeUpFile(COMPOSE_FILE),
          "request_execution",
          "Bring the TypeType stack up",
          STEP.up,
        );
      }
      return blocked(`the compose file I wrote is not in ${COMPOSE_DIR}.`);
    }
    if (command === CMD.verify) {
      if (!ok) return blocked(`TypeType does not answer on :${APP_PORT} (curl exit ${exit}).`);
      return marking(
        call(
          `TypeType answers on :${APP_PORT}. The goal is verified.`,
          "report_outcome",
          {
            outcome: "verified",
            summary: `TypeType runs in container ${container ?? APP} on ${node} and http://localhost:${APP_PORT} answers with the TypeType page.`,
          },
          d,
        ),
        [{ step: STEP.verify, status: "done" }],
      );
    }
    return blocked(`an unexpected result of \`${command}\` (exit ${exit}).`);
  };
}

/** The closing report, built from what the conversation shows happened. */
function finalReport(req: DoubleRequest, container: string, node: string): string {
  const notes = req.messages
    .flatMap((m) => (m.role === "user" ? requestBlocks(m.content) : []))
    .filter((b) => b.type === "text" && (b.text ?? "").startsWith(SYSTEM_NOTE_PREFIX))
    .flatMap((b) => executionNotes(b.text ?? ""));
  const retries = notes.filter((n) => n.status !== "completed" && /unexpected HTTP status: 5\d\d/.test(n.body)).length;
  const wrongPath = notes.some((n) => /no such file or directory/.test(n.body));
  const recovered = toolCalls(req).some((c) => c.name === "run" && c.input.command === CMD.getDocker);
  const lines = [
    `Done: TypeType is deployed and verified. It runs in container **${container}** on ${node} and http://localhost:${APP_PORT} answers with the TypeType page.`,
    "",
    "What happened on the way:",
    recovered
      ? "- Debian's docker.io has no Compose plugin, so I installed Docker from get.docker.com."
      : "- Docker and Compose installed cleanly.",
    ...(wrongPath ? [`- My first \`docker compose up\` pointed at the wrong path; I found the file in ${COMPOSE_DIR} and used it.`] : []),
    ...(retries > 0
      ? [`- The image registry answered 500 ${retries === 1 ? "on the first attempt" : `on ${retries} attempts`}; retrying succeeded.`]
      : []),
  ];
  return lines.join("\n");
}
