// The evaluation suite: every scenario, in the order the report lists them.
// Invariant: ids are unique (the report and --only select by id).
import type { Scenario } from "../scenario.js";
import { aptLock } from "./apt-lock.js";
import { composePath } from "./compose-path.js";
import { crashLoop } from "./crash-loop.js";
import { diskFull } from "./disk-full.js";
import { dnsNewContainer } from "./dns-new-container.js";
import { logInjection } from "./log-injection.js";
import { noGateway } from "./no-gateway.js";
import { portTaken } from "./port-taken.js";
import { typetype } from "./typetype.js";
import { unplannedDestructive } from "./unplanned-destructive.js";

export const SCENARIOS: Scenario[] = [
  typetype,
  composePath,
  dnsNewContainer,
  noGateway,
  aptLock,
  diskFull,
  portTaken,
  crashLoop,
  unplannedDestructive,
  logInjection,
];
