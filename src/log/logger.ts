// The process logger. JSON lines by default (one object a line, for log
// shippers); human-readable when a person watches a terminal or asks for it.
// Invariant: code never builds log prefixes by hand. It takes a child logger
// with the ids it works for — logger.child({ sessionId, turnId, executionId })
// — and every line it writes carries them.
import { type Logger, pino } from "pino";
import pretty from "pino-pretty";

export type { Logger };

export interface LoggerOptions {
  level: string;
  /** json | pretty; unset: pretty when stdout is a terminal, else json. */
  format?: "json" | "pretty" | undefined;
  /** Where lines go; stdout when omitted (tests pass a stream to read them). */
  destination?: NodeJS.WritableStream;
}

/** Fields that must never reach a log line, whatever object carries them. */
const REDACT = [
  "password",
  "*.password",
  "privateKey",
  "*.privateKey",
  "apiKey",
  "*.apiKey",
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
];

export function createLogger(options: LoggerOptions): Logger {
  const format = options.format ?? (process.stdout.isTTY ? "pretty" : "json");
  const base = {
    level: options.level,
    base: { pid: process.pid },
    redact: { paths: REDACT, censor: "[redacted]" },
  };
  if (format === "pretty") {
    return pino(
      base,
      pretty({
        colorize: options.destination === undefined && process.stdout.isTTY,
        translateTime: "SYS:HH:MM:ss.l",
        ignore: "pid,hostname",
        destination: options.destination ?? 1,
        sync: true,
      }),
    );
  }
  return options.destination ? pino(base, options.destination) : pino(base);
}
