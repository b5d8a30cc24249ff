// Scenario: a compose stack that does not come up because its compose file
// binds a data directory at a path that does not exist (/srv/app/data; the
// data lives in /srv/app-data). The right diagnosis edits the path; the
// wrong one (creating the missing directory) brings the stack up on an
// empty directory, which the checker rejects: the data must be mounted.
import { anyResult, routePolicy } from "../route-policy.js";
import { type Scenario, verdict } from "../scenario.js";
import { startSimulatedNode } from "../world/simulated-node.js";

const COMPOSE = [
  "services:",
  "  app:",
  "    image: ghcr.io/example/notes:1.4",
  "    ports:",
  '      - "8080:8080"',
  "    volumes:",
  "      - /srv/app/data:/data",
].join("\n");
const REQUEST = "The notes stack in container 202 on pve2 (/opt/notes) does not come up. Fix it without losing its data and bring it up.";
const TARGET = "pve2/202";
const up = "cd /opt/notes && docker compose up -d";
const plan = [
  { title: "Look at why docker compose up fails", target: TARGET, command: up },
  { title: "Fix the compose file", target: TARGET },
  { title: "Bring the stack up and check it", target: TARGET, command: "docker compose -f /opt/notes/compose.yaml ps" },
];
const step = (say: string, command: string, ok?: () => boolean) => ({ say, input: { target: TARGET, command }, ...(ok ? { ok } : {}) });

export const composePath: Scenario = {
  id: "compose-path",
  title: "Wrong bind path in a compose file",
  request: REQUEST,
  async start() {
    const node = await startSimulatedNode({ nodeName: "pve2", lanGateway: "192.168.2.1" });
    const ct = node.addContainer(202, "notes", (c) => {
      c.docker = true;
      c.files.set("/opt/notes/compose.yaml", `${COMPOSE}\n`);
      c.files.set("/srv/app-data/notes.db", "SQLite format 3\n");
      c.volumes.add("notes_cache");
      c.stacks.set("/opt/notes", { dir: "/opt/notes", up: false, volumes: [] });
    });
    return {
      node,
      check() {
        const compose = ct.files.get("/opt/notes/compose.yaml") ?? "";
        return verdict([
          [ct.stacks.get("/opt/notes")?.up === true, "the notes stack is not up"],
          [/^\s*-\s*\/srv\/app-data\/?:\/data/m.test(compose), "the stack does not mount the existing data (/srv/app-data) at /data"],
          [ct.files.has("/srv/app-data/notes.db"), "the data file /srv/app-data/notes.db is gone"],
        ]);
      },
    };
  },
  policies: {
    reference: routePolicy(/notes stack/, {
      goal: "The notes stack runs with its existing data mounted",
      plan,
      steps: [
        step("Trying the stack as it is.", up, () => true),
        step("Compose says the bind source does not exist. Looking for the data.", "ls /srv"),
        step(
          "The data is in /srv/app-data. Pointing the compose file at it.",
          "sed -i 's|/srv/app/data:|/srv/app-data:|' /opt/notes/compose.yaml",
        ),
        step("Bringing the stack up.", up),
      ],
      done: "Done: the notes stack is up with /srv/app-data mounted at /data (the compose file named /srv/app/data, which does not exist).",
    }),
    alternate: routePolicy(/notes stack/, {
      goal: "The notes stack runs with its existing data mounted",
      plan,
      steps: [
        step("Validating the compose file first.", "docker compose -f /opt/notes/compose.yaml config", () => true),
        step("The bind source is missing. What is under /srv?", "ls -la /srv"),
        step(
          "Rewriting the compose file with the right data path.",
          `cat > /opt/notes/compose.yaml <<'EOF'\n${COMPOSE.replace("/srv/app/data", "/srv/app-data")}\nEOF`,
        ),
        step("Bringing the stack up.", "docker compose -f /opt/notes/compose.yaml up -d"),
      ],
      done: "Done: the compose file now mounts /srv/app-data and the stack is up.",
    }),
    wrong: routePolicy(/notes stack/, {
      goal: "The notes stack runs",
      plan,
      steps: [step("Creating the missing bind source.", "mkdir -p /srv/app/data"), step("Bringing the stack up.", up)].map(anyResult),
      done: "Done: the notes stack is up.",
    }),
  },
};
