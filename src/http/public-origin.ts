// Where Nomos is reached from, and who is calling: the one place that reads
// Host, X-Forwarded-Host/Proto/For. NOMOS_PUBLIC_URL names the origin
// operators use; refuseForeignHost answers any other Host with 421 before a
// route runs, which is what defeats DNS rebinding (a page on
// rebind.evil.example that resolves to this server still sends its own name
// as Host). Behind a reverse proxy (NOMOS_TRUST_PROXY=1) the forwarded
// headers count; without it they are ignored, since any client can send them.
//
// Invariant: every other module that needs "our host", "is this https" or
// "the caller's address" asks this one, so a proxy setting cannot be honoured
// in one place and ignored in another.
import type { Context, MiddlewareHandler } from "hono";
import { HttpError } from "./http-error.js";

export interface PublicOrigin {
  /** NOMOS_PUBLIC_URL, or http://<HOST>:<PORT>. */
  url: URL;
  /** NOMOS_TRUST_PROXY: X-Forwarded-Proto/For/Host are set by our proxy. */
  trustProxy: boolean;
  /**
   * HOST listens on loopback (a loopback address, or a wildcard such as
   * 0.0.0.0, which includes it): localhost, 127.0.0.1 and [::1] are ours too,
   * on any port (a container's port may be mapped to another one).
   */
  loopback: boolean;
}

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

export const isLoopbackHost = (host: string) => LOOPBACK_NAMES.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The default: http://127.0.0.1:8080, bound to loopback (tests, and createApp without one). */
export function publicOriginFrom(p: { publicUrl?: string; host: string; port: number; trustProxy?: boolean }): PublicOrigin {
  const bracketed = p.host.includes(":") && !p.host.startsWith("[") ? `[${p.host}]` : p.host;
  const wildcard = p.host === "0.0.0.0" || p.host === "::" || p.host === "[::]";
  const shown = wildcard ? "localhost" : bracketed;
  return {
    url: new URL(p.publicUrl ?? `http://${shown}:${p.port}`),
    trustProxy: p.trustProxy ?? false,
    loopback: wildcard || isLoopbackHost(p.host) || p.host === "localhost",
  };
}

/** The first value of a comma-separated forwarded header, trimmed. */
const first = (v: string | undefined) => v?.split(",")[0]?.trim() || undefined;

/** The Host the client asked for (lower-case, with port when one was given). */
export function requestHost(c: Context, origin: PublicOrigin): string {
  const forwarded = origin.trustProxy ? first(c.req.header("x-forwarded-host")) : undefined;
  return (forwarded ?? c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
}

/** True when the client reached us over https (directly or, trusted, through the proxy). */
export function requestIsHttps(c: Context, origin: PublicOrigin): boolean {
  if (origin.url.protocol === "https:") return true;
  const proto = origin.trustProxy ? first(c.req.header("x-forwarded-proto")) : undefined;
  return (proto ?? new URL(c.req.url).protocol.replace(/:$/, "")) === "https";
}

/**
 * The caller's address: the socket's peer, or behind a trusted proxy the
 * last X-Forwarded-For entry (the one our proxy appended; earlier entries
 * are whatever the client claimed).
 */
export function clientAddress(c: Context, origin: PublicOrigin): string {
  if (origin.trustProxy) {
    const chain = c.req
      .header("x-forwarded-for")
      ?.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const last = chain?.at(-1);
    if (last) return last;
  }
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? "local";
}

function hostnameOf(host: string): string {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return "";
  }
}

/** Is this Host one of ours? The public URL's host exactly, or (bound to loopback) a loopback name on any port. */
export function hostIsOurs(host: string, origin: PublicOrigin, path = ""): boolean {
  if (host === origin.url.host.toLowerCase()) return true;
  // Loopback names are ours when we listen only there; and /healthz answers
  // them always, for a container's own health check (a browser on another
  // site can never send a loopback Host).
  return (origin.loopback || path === "/healthz") && isLoopbackHost(hostnameOf(host));
}

export function refuseForeignHost(origin: PublicOrigin): MiddlewareHandler {
  return async (c, next) => {
    const host = requestHost(c, origin);
    if (!hostIsOurs(host, origin, c.req.path)) {
      throw new HttpError(
        "misdirected_request",
        `this server answers to ${origin.url.host}, not to Host "${host.slice(0, 100)}" (set NOMOS_PUBLIC_URL to the address operators use)`,
      );
    }
    await next();
  };
}
