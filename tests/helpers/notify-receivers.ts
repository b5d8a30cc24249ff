// Receivers for the notification tests, all on 127.0.0.1 and started by the
// test: an HTTP endpoint that records each request (the ntfy double and the
// webhook receiver are both this, told how many times to fail first), and a
// browser's side of Web Push: a P256 key pair and auth secret made with
// node:crypto, and the aes128gcm decryption (RFC 8291) a browser would do,
// so a test reads what the push service was given exactly as the browser
// would. Also webhookVerify: the check a receiver makes of X-Nomos-Signature.
import { createDecipheriv, createECDH, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The status the receiver answered with. */
  answered: number;
}

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Requests answered 2xx. */
  accepted(): ReceivedRequest[];
  close(): Promise<void>;
}

/** Answers `failFirst` requests with `failStatus`, then 200 (or 201 for push-like endpoints). */
export async function startReceiver(o: { failFirst?: number; failStatus?: number; okStatus?: number } = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let failures = o.failFirst ?? 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const status = failures > 0 ? (o.failStatus ?? 500) : (o.okStatus ?? 200);
      if (failures > 0) failures--;
      requests.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks), answered: status });
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(status < 300 ? "ok" : "receiver says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/topic`,
    requests,
    accepted: () => requests.filter((r) => r.answered < 300),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a receiver does with X-Nomos-Signature: HMAC the raw body, compare in constant time. */
export function webhookVerify(body: Buffer, header: string | undefined, secret: string): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(body).digest("hex"));
  const got = Buffer.from(header.slice("sha256=".length));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** A browser's subscription keys, and the decryption of what its push service receives. */
export function browserPushKeys() {
  const ecdh = createECDH("prime256v1");
  const publicKey = ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    keys: { p256dh: publicKey.toString("base64url"), auth: auth.toString("base64url") },
    /** RFC 8291 (aes128gcm, one record): the plaintext the browser would read. */
    decrypt(body: Buffer): string {
      const salt = body.subarray(0, 16);
      const idlen = body[20]!;
      const serverPublic = body.subarray(21, 21 + idlen);
      const cipher = body.subarray(21 + idlen);
      const shared = ecdh.computeSecret(serverPublic);
      const keyInfo = Buffer.concat([Buffer.from("WebPush: info\0"), publicKey, serverPublic]);
      const ikm = Buffer.from(hkdfSync("sha256", shared, auth, keyInfo, 32));
      const cek = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
      const nonce = Buffer.from(hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
      const decipher = createDecipheriv("aes-128-gcm", cek, nonce);
      decipher.setAuthTag(cipher.subarray(cipher.length - 16));
      const padded = Buffer.concat([decipher.update(cipher.subarray(0, cipher.length - 16)), decipher.final()]);
      // The last record ends with the delimiter 0x02, then zero padding.
      let end = padded.length - 1;
      while (end >= 0 && padded[end] === 0) end--;
      if (padded[end] !== 2) throw new Error("not a last record (no 0x02 delimiter)");
      return padded.subarray(0, end).toString("utf8");
    },
  };
}

/** Polls `check` until it holds (or fails after `ms` with what it last saw). */
export async function until<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
