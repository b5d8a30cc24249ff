// OpenSSH-style host key fingerprints: "SHA256:" + unpadded base64 of the
// SHA-256 of the public key blob, exactly what `ssh-keygen -lf` prints.
// Invariant: comparison is over the canonical unpadded form and constant-time.
import { createHash, timingSafeEqual } from "node:crypto";

export function sha256Fingerprint(publicKeyBlob: Buffer): string {
  return `SHA256:${createHash("sha256").update(publicKeyBlob).digest("base64").replace(/=+$/, "")}`;
}

export function fingerprintsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a.replace(/=+$/, ""));
  const y = Buffer.from(b.replace(/=+$/, ""));
  return x.length === y.length && timingSafeEqual(x, y);
}
