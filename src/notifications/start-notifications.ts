// Starts the notifier of a process (main.ts): VAPID keys ensured, the
// environment's channels applied to the first operator, LISTEN on
// nomos_notifications, the sweep. Returns its idempotent stop.
import type { Kysely } from "kysely";
import type { Config } from "../config/env.js";
import type { Sql } from "../db/connect.js";
import type { Database } from "../db/schema.js";
import type { Logger } from "../log/logger.js";
import { Notifier } from "./notifier.js";

export interface StartedNotifications {
  notifier: Notifier;
  stop(): Promise<void>;
}

export async function startNotifications(p: {
  config: Pick<Config, "notify" | "sweepSeconds">;
  db: Kysely<Database>;
  listen: Sql;
  log: Logger;
  owner: string;
  publicOrigin: () => URL;
}): Promise<StartedNotifications> {
  const notifier = new Notifier({
    db: p.db,
    listen: p.listen,
    log: p.log.child({ component: "notifier" }),
    owner: p.owner,
    publicOrigin: p.publicOrigin,
    sweepSeconds: p.config.sweepSeconds,
    envChannels: p.config.notify,
  });
  try {
    await notifier.start();
  } catch (err) {
    await notifier.stop().catch(() => {});
    throw err;
  }
  return { notifier, stop: () => notifier.stop() };
}
