// The configuration of a Nomos process: one zod schema over the environment
// variables of DESIGN.md. Invariant: the service reads process.env only
// through here: main.ts, migrate-cli.ts and create-operator-cli.ts call
// loadConfig once and hand the typed result to whoever needs a piece of it.
// The other readers are tools, not the service, and read their own
// variables: demo-cli.ts (NOMOS_DEMO_PACE, and what it passes to the service
// it starts), eval-cli.ts (its options, and DATABASE_URL for scratch
// databases) and eval/nomos-process.ts (PATH, HOME for the child), model-double/cli.ts (MODEL_DOUBLE_PORT); db/embedded.ts passes the
// environment through to PostgreSQL. tests/module-ownership keeps this list
// true. A bad value never gets past this module: it becomes one
// ConfigError line naming the variable and what is wrong with it.
import { z } from "zod";

/** An empty string (`FOO=` in a .env file) means "not set", as users expect. */
const unsetIfEmpty = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);

const optionalString = z.preprocess(unsetIfEmpty, z.string().optional());

const integer = (min: number, max: number, fallback: number) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .regex(/^\d+$/, `must be a whole number from ${min} to ${max}`)
      .transform(Number)
      .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
      .default(fallback),
  );

const url = (protocols: RegExp, what: string) =>
  z.preprocess(
    unsetIfEmpty,
    z
      .string()
      .refine((v) => {
        try {
          return protocols.test(new URL(v).protocol);
        } catch {
          return false;
        }
      }, `must be ${what}`)
      .optional(),
  );

export const envSchema = z
  .object({
    DATABASE_URL: url(/^postgres(ql)?:$/, "a postgres:// or postgresql:// URL"),
    // A direct connection for LISTEN when DATABASE_URL goes through a transaction pooler.
    NOMOS_DATABASE_LISTEN_URL: url(/^postgres(ql)?:$/, "a postgres:// or postgresql:// URL"),
    NOMOS_DATA_DIR: z.preprocess(unsetIfEmpty, z.string().default("./.nomos")),
    HOST: z.preprocess(unsetIfEmpty, z.string().default("127.0.0.1")),
    PORT: integer(0, 65535, 8080),
    ANTHROPIC_API_KEY: optionalString,
    // Sent as "Authorization: Bearer" (llama.cpp's --api-key, gateways); the SDK's own name for it.
    ANTHROPIC_AUTH_TOKEN: optionalString,
    // "off" for servers without prompt caching (Ollama, llama.cpp): no cache_control is sent.
    NOMOS_MODEL_CACHE: z.preprocess(unsetIfEmpty, z.enum(["on", "off"], "must be on or off").default("on")),
    // The model's context window in tokens: history is trimmed (oldest first) to fit it. Unset: no trimming.
    NOMOS_MODEL_CONTEXT_TOKENS: z.preprocess(
      unsetIfEmpty,
      z
        .string()
        .regex(/^\d+$/, "must be a whole number of tokens from 4096 to 10000000")
        .transform(Number)
        .pipe(z.number().int().min(4096, "must be at least 4096").max(10_000_000, "must be at most 10000000"))
        .optional(),
    ),
    ANTHROPIC_BASE_URL: url(/^https?:$/, "an http:// or https:// URL"),
    NOMOS_MODEL: z.preprocess(unsetIfEmpty, z.string().default("claude-sonnet-4-6")),
    // Seconds the model API may take to start answering (each attempt) or stay silent mid-stream.
    NOMOS_MODEL_TIMEOUT_S: integer(1, 3600, 120),
    NOMOS_TARGETS_FILE: optionalString,
    NOMOS_API_TOKEN: z.preprocess(
      unsetIfEmpty,
      z.string().min(16, "must be at least 16 characters (a bearer token guards root on your servers)").optional(),
    ),
    NOMOS_ADMIN_USER: z.preprocess(
      unsetIfEmpty,
      z
        .string()
        .regex(/^[A-Za-z0-9._@-]{1,64}$/, "must be 1-64 letters, digits or . _ @ -")
        .optional(),
    ),
    NOMOS_ADMIN_PASSWORD: z.preprocess(unsetIfEmpty, z.string().min(8, "must be at least 8 characters").optional()),
    NOMOS_ASSENT_MINUTES: integer(1, 24 * 60, 30),
    // How long an approval card waits for a decision before it expires.
    NOMOS_APPROVAL_MINUTES: integer(1, 7 * 24 * 60, 60),
    NOMOS_SWEEP_SECONDS: integer(1, 3600, 60),
    // Guest snapshots (issue 17): days a verified plan's snapshot is kept, and how many Nomos keeps per guest.
    NOMOS_SNAPSHOT_KEEP_DAYS: integer(0, 3650, 7),
    NOMOS_SNAPSHOT_KEEP_PER_GUEST: integer(1, 100, 3),
    NOMOS_MAX_ITERATIONS: integer(1, 500, 40),
    NOMOS_MAX_CONTINUATIONS: integer(1, 1000, 40),
    // Executions over SSH (issue 3).
    NOMOS_SSH_CONNECT_TIMEOUT_S: integer(1, 300, 10),
    NOMOS_EXEC_DEFAULT_TIMEOUT_S: integer(1, 86_400, 600),
    NOMOS_EXEC_MAX_TIMEOUT_S: integer(1, 86_400, 3600),
    NOMOS_OUTPUT_CAP_KB: integer(4, 65_536, 256),
    /** Extra secret values (comma-separated) to redact from command output. */
    NOMOS_REDACT: optionalString,
    LOG_LEVEL: z.preprocess(unsetIfEmpty, z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info")),
    NOMOS_LOG_FORMAT: z.preprocess(unsetIfEmpty, z.enum(["json", "pretty"]).optional()),
    // Issue 14: where operators reach Nomos (other Hosts are refused with 421),
    // whether a reverse proxy's X-Forwarded-* headers count, and the owner
    // role that runs migrations when the service's role is not the owner.
    NOMOS_PUBLIC_URL: url(/^https?:$/, "an http:// or https:// URL (the address operators type, e.g. https://nomos.home.arpa)"),
    NOMOS_TRUST_PROXY: z.preprocess(unsetIfEmpty, z.enum(["0", "1"], "must be 0 or 1").default("0")),
    NOMOS_DATABASE_OWNER_URL: url(/^postgres(ql)?:$/, "a postgres:// or postgresql:// URL"),
    // Issue 16: prices per model (JSON: {"model": {"input", "output", "cacheRead"?, "cacheWrite"?}} in USD per
    // million tokens, over the defaults of usage/pricing.ts), and the tokens an assent window may spend.
    NOMOS_MODEL_PRICES: z.preprocess(
      unsetIfEmpty,
      z
        .string()
        .transform((v, ctx) => {
          try {
            return JSON.parse(v) as unknown;
          } catch {
            ctx.addIssue({ code: "custom", message: 'must be JSON, e.g. {"claude-sonnet-4-6": {"input": 3, "output": 15}}' });
            return z.NEVER;
          }
        })
        .pipe(
          z.record(
            z.string().min(1),
            z
              .object({
                input: z.number().min(0),
                output: z.number().min(0),
                cacheRead: z.number().min(0).optional(),
                cacheWrite: z.number().min(0).optional(),
              })
              .strict(),
            'must map each model to {"input", "output", "cacheRead"?, "cacheWrite"?} in USD per million tokens',
          ),
        )
        .optional(),
    ),
    NOMOS_WINDOW_TOKEN_BUDGET: z.preprocess(
      unsetIfEmpty,
      z
        .string()
        .regex(/^\d+$/, "must be a positive whole number of tokens")
        .transform(Number)
        .pipe(z.number().int().min(1, "must be at least 1").max(Number.MAX_SAFE_INTEGER, "is too large"))
        .optional(),
    ),
    // Set by `npm run demo`: the page says plainly that the model and the node are simulated.
    NOMOS_DEMO: z.preprocess(unsetIfEmpty, z.enum(["0", "1"], "must be 0 or 1").default("0")),
    // Issue 16: the first operator's notification channels (src/notifications/).
    NOMOS_NOTIFY_WEBHOOK_URL: url(/^https?:$/, "an http:// or https:// URL (where the signed JSON POST goes)"),
    NOMOS_NOTIFY_WEBHOOK_SECRET: z.preprocess(
      unsetIfEmpty,
      z
        .string()
        .min(16, "must be at least 16 characters (it signs every webhook: X-Nomos-Signature)")
        .max(500, "must be at most 500 characters")
        .optional(),
    ),
    NOMOS_NOTIFY_NTFY_URL: url(/^https?:$/, "an http:// or https:// URL (the ntfy topic, e.g. https://ntfy.sh/my-topic)"),
    NOMOS_NOTIFY_NTFY_TOKEN: z.preprocess(unsetIfEmpty, z.string().max(500, "must be at most 500 characters").optional()),
  })
  .superRefine((env, ctx) => {
    if ((env.NOMOS_ADMIN_USER === undefined) !== (env.NOMOS_ADMIN_PASSWORD === undefined)) {
      const missing = env.NOMOS_ADMIN_USER === undefined ? "NOMOS_ADMIN_USER" : "NOMOS_ADMIN_PASSWORD";
      ctx.addIssue({
        code: "custom",
        path: [missing],
        message: "must be set together with the other of NOMOS_ADMIN_USER/NOMOS_ADMIN_PASSWORD",
      });
    }
    // A webhook is always signed; a secret or token without its URL is a typo somewhere.
    if (env.NOMOS_NOTIFY_WEBHOOK_URL !== undefined && env.NOMOS_NOTIFY_WEBHOOK_SECRET === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["NOMOS_NOTIFY_WEBHOOK_SECRET"],
        message: "must be set when NOMOS_NOTIFY_WEBHOOK_URL is (at least 16 characters; the receiver checks X-Nomos-Signature with it)",
      });
    }
    if (env.NOMOS_NOTIFY_WEBHOOK_SECRET !== undefined && env.NOMOS_NOTIFY_WEBHOOK_URL === undefined) {
      ctx.addIssue({ code: "custom", path: ["NOMOS_NOTIFY_WEBHOOK_URL"], message: "must be set when NOMOS_NOTIFY_WEBHOOK_SECRET is" });
    }
    if (env.NOMOS_NOTIFY_NTFY_TOKEN !== undefined && env.NOMOS_NOTIFY_NTFY_URL === undefined) {
      ctx.addIssue({ code: "custom", path: ["NOMOS_NOTIFY_NTFY_URL"], message: "must be set when NOMOS_NOTIFY_NTFY_TOKEN is" });
    }
  });

export type Env = z.output<typeof envSchema>;

/** Configuration as the rest of the code sees it: grouped, typed, defaulted. */
export interface Config {
  databaseUrl: string | undefined;
  /** Where LISTEN connects (NOMOS_DATABASE_LISTEN_URL); undefined: the same as the database. */
  databaseListenUrl: string | undefined;
  dataDir: string;
  http: { host: string; port: number };
  model: {
    apiKey: string | undefined;
    baseUrl: string | undefined;
    name: string;
    timeoutS: number;
    /** ANTHROPIC_AUTH_TOKEN: a bearer token instead of (or with) the key. */
    authToken?: string | undefined;
    /** Send cache_control (prompt caching); off for local servers (NOMOS_MODEL_CACHE). */
    cache?: boolean;
    /** Trim history to fit this many tokens (NOMOS_MODEL_CONTEXT_TOKENS). */
    contextTokens?: number | undefined;
    /** NOMOS_MODEL_PRICES: the shape of usage/pricing.ts's ModelPrices (USD per million tokens). */
    prices?:
      | Record<string, { inputPerMTok: number; outputPerMTok: number; cacheReadPerMTok?: number; cacheWritePerMTok?: number }>
      | undefined;
  };
  /** NOMOS_WINDOW_TOKEN_BUDGET: an assent window closes ('budget') once its tokens pass this. */
  windowTokenBudget?: number | undefined;
  targetsFile: string | undefined;
  apiToken: string | undefined;
  admin: { username: string; password: string } | undefined;
  assentMinutes: number;
  approvalMinutes: number;
  sweepSeconds: number;
  /** Retention of Nomos's guest snapshots (src/snapshots/retention.ts). */
  snapshots: { keepDays: number; keepPerGuest: number };
  maxIterations: number;
  maxContinuations: number;
  log: { level: Env["LOG_LEVEL"]; format: "json" | "pretty" | undefined };
  /** NOMOS_PUBLIC_URL (undefined: http://<HOST>:<PORT>) and NOMOS_TRUST_PROXY. */
  publicUrl: string | undefined;
  trustProxy: boolean;
  /** NOMOS_DATABASE_OWNER_URL: runs migrations when DATABASE_URL's role is not the owner. */
  databaseOwnerUrl: string | undefined;
  /** Running as `npm run demo` (scripted model, simulated Proxmox node). */
  demo: boolean;
  /** NOMOS_NOTIFY_*: the first operator's notification channels. */
  notify: {
    webhook: { url: string; secret: string } | undefined;
    ntfy: { url: string; token: string | undefined } | undefined;
  };
  executions: {
    connectTimeoutS: number;
    defaultTimeoutS: number;
    maxTimeoutS: number;
    outputCapBytes: number;
    /** Values redacted from output: NOMOS_REDACT plus this process's own secrets. */
    secrets: string[];
  };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

const shown = (v: unknown) => {
  const s = String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

/** Variables whose value must never be echoed back in an error. */
const SECRET = new Set([
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "NOMOS_API_TOKEN",
  "NOMOS_ADMIN_PASSWORD",
  "DATABASE_URL",
  "NOMOS_DATABASE_OWNER_URL",
  "NOMOS_REDACT",
  "NOMOS_DATABASE_LISTEN_URL",
  "NOMOS_NOTIFY_WEBHOOK_SECRET",
  "NOMOS_NOTIFY_NTFY_TOKEN",
]);

/**
 * Reads the environment into a Config, or throws one ConfigError whose
 * message is a single line naming every bad variable.
 */
export function loadConfig(source: Record<string, string | undefined>): Config {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "environment");
      const raw = source[name];
      const got = raw === undefined || raw === "" || SECRET.has(name) ? "" : ` (got "${shown(raw)}")`;
      return `${name} ${issue.message}${got}`;
    });
    throw new ConfigError(`configuration error: ${problems.join("; ")}`);
  }
  const env = parsed.data;
  return {
    databaseUrl: env.DATABASE_URL,
    databaseListenUrl: env.NOMOS_DATABASE_LISTEN_URL,
    dataDir: env.NOMOS_DATA_DIR,
    http: { host: env.HOST, port: env.PORT },
    model: {
      apiKey: env.ANTHROPIC_API_KEY,
      baseUrl: env.ANTHROPIC_BASE_URL,
      name: env.NOMOS_MODEL,
      timeoutS: env.NOMOS_MODEL_TIMEOUT_S,
      authToken: env.ANTHROPIC_AUTH_TOKEN,
      cache: env.NOMOS_MODEL_CACHE === "on",
      contextTokens: env.NOMOS_MODEL_CONTEXT_TOKENS,
      prices: env.NOMOS_MODEL_PRICES
        ? Object.fromEntries(
            Object.entries(env.NOMOS_MODEL_PRICES).map(([model, p]) => [
              model,
              {
                inputPerMTok: p.input,
                outputPerMTok: p.output,
                ...(p.cacheRead !== undefined ? { cacheReadPerMTok: p.cacheRead } : {}),
                ...(p.cacheWrite !== undefined ? { cacheWritePerMTok: p.cacheWrite } : {}),
              },
            ]),
          )
        : undefined,
    },
    windowTokenBudget: env.NOMOS_WINDOW_TOKEN_BUDGET,
    targetsFile: env.NOMOS_TARGETS_FILE,
    apiToken: env.NOMOS_API_TOKEN,
    admin:
      env.NOMOS_ADMIN_USER !== undefined && env.NOMOS_ADMIN_PASSWORD !== undefined
        ? { username: env.NOMOS_ADMIN_USER, password: env.NOMOS_ADMIN_PASSWORD }
        : undefined,
    assentMinutes: env.NOMOS_ASSENT_MINUTES,
    approvalMinutes: env.NOMOS_APPROVAL_MINUTES,
    sweepSeconds: env.NOMOS_SWEEP_SECONDS,
    snapshots: { keepDays: env.NOMOS_SNAPSHOT_KEEP_DAYS, keepPerGuest: env.NOMOS_SNAPSHOT_KEEP_PER_GUEST },
    maxIterations: env.NOMOS_MAX_ITERATIONS,
    maxContinuations: env.NOMOS_MAX_CONTINUATIONS,
    log: { level: env.LOG_LEVEL, format: env.NOMOS_LOG_FORMAT },
    publicUrl: env.NOMOS_PUBLIC_URL,
    trustProxy: env.NOMOS_TRUST_PROXY === "1",
    databaseOwnerUrl: env.NOMOS_DATABASE_OWNER_URL,
    demo: env.NOMOS_DEMO === "1",
    notify: {
      webhook:
        env.NOMOS_NOTIFY_WEBHOOK_URL !== undefined && env.NOMOS_NOTIFY_WEBHOOK_SECRET !== undefined
          ? { url: env.NOMOS_NOTIFY_WEBHOOK_URL, secret: env.NOMOS_NOTIFY_WEBHOOK_SECRET }
          : undefined,
      ntfy: env.NOMOS_NOTIFY_NTFY_URL !== undefined ? { url: env.NOMOS_NOTIFY_NTFY_URL, token: env.NOMOS_NOTIFY_NTFY_TOKEN } : undefined,
    },
    executions: {
      connectTimeoutS: env.NOMOS_SSH_CONNECT_TIMEOUT_S,
      defaultTimeoutS: Math.min(env.NOMOS_EXEC_DEFAULT_TIMEOUT_S, env.NOMOS_EXEC_MAX_TIMEOUT_S),
      maxTimeoutS: env.NOMOS_EXEC_MAX_TIMEOUT_S,
      outputCapBytes: env.NOMOS_OUTPUT_CAP_KB * 1024,
      secrets: [
        ...(env.NOMOS_REDACT ?? "")
          .split(",")
          .map((v) => v.trim())
          .filter(Boolean),
        env.ANTHROPIC_API_KEY,
        env.ANTHROPIC_AUTH_TOKEN,
        env.NOMOS_API_TOKEN,
        env.NOMOS_ADMIN_PASSWORD,
        env.NOMOS_NOTIFY_WEBHOOK_SECRET,
        env.NOMOS_NOTIFY_NTFY_TOKEN,
        env.DATABASE_URL ? passwordOf(env.DATABASE_URL) : undefined,
        env.NOMOS_DATABASE_OWNER_URL ? passwordOf(env.NOMOS_DATABASE_OWNER_URL) : undefined,
        env.NOMOS_DATABASE_LISTEN_URL ? passwordOf(env.NOMOS_DATABASE_LISTEN_URL) : undefined,
      ].filter((v): v is string => typeof v === "string" && v.length > 0),
    },
  };
}

function passwordOf(url: string): string | undefined {
  try {
    return decodeURIComponent(new URL(url).password) || undefined;
  } catch {
    return undefined;
  }
}
