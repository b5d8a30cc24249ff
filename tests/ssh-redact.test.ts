// Redaction (src/ssh/redact.ts) of the secret shapes issue 12 adds: PGP
// private key blocks, `mysql -p<password>`, `PGPASSWORD value`, shadow-style
// hashes, kubeconfig credentials and Authorization headers of any scheme.
// Each secret value is gone from the text; what surrounds it stays.
import { describe, expect, it } from "vitest";
import { makeRedactor } from "../src/ssh/redact.js";

const redact = makeRedactor();

const CASES: [string, string, string][] = [
  [
    "PGP private key block",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQdGBGV3c2VjcmV0a2V5bWF0ZXJpYWw=\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----\n",
    "lQdGBGV3c2VjcmV0a2V5bWF0ZXJpYWw",
  ],
  ["PGP block cut by the cap", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQdGBGV3c2VjcmV0a2V5bWF0", "lQdGBGV3c2VjcmV0a2V5bWF0"],
  ["mysql -p<password>", "root  1234  mysql -uroot -pS3cr3tPass -h db app", "S3cr3tPass"],
  ["mysqldump -p<password>", "mysqldump -u backup -pHunter2hunter2 --all-databases", "Hunter2hunter2"],
  ["PGPASSWORD with a space", "export PGPASSWORD s3cr3t-pg-pass", "s3cr3t-pg-pass"],
  [
    "shadow line",
    "root:$6$Zq8jTBXc$u7CqLqKY0bX0Cw3y2mM4Yl2hX9vJq0ZrYb1c2d3e4f5g6h7i8j9k0:19700:0:99999:7:::",
    "u7CqLqKY0bX0Cw3y2mM4Yl2hX9vJq0ZrYb1c2d3e4f5g6h7i8j9k0",
  ],
  [
    "yescrypt hash",
    "bob:$y$j9T$F5Jx5fExrKuJdvPpScLlA.$Lq3Mw9pYfVQ7eDZ8uU1b2c3d4e5f6g7h8i9:19000::::::",
    "Lq3Mw9pYfVQ7eDZ8uU1b2c3d4e5f6g7h8i9",
  ],
  [
    "kubeconfig client-key-data",
    "    client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo=",
    "LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQo",
  ],
  ["kubeconfig token", "    token: kubeadm-abcdef.0123456789abcdef", "kubeadm-abcdef.0123456789abcdef"],
  ["Authorization: Bearer", "> Authorization: Bearer abc.def.ghi-secret-token", "abc.def.ghi-secret-token"],
  [
    "Authorization: Digest",
    'Authorization: Digest username="admin", response="6629fae49393a05397450978507c4ef1"',
    "6629fae49393a05397450978507c4ef1",
  ],
  [
    "Authorization: PVEAPIToken",
    "Authorization: PVEAPIToken=root@pam!ci=aaaabbbb-cccc-dddd-eeee-ffff00001111",
    "aaaabbbb-cccc-dddd-eeee-ffff00001111",
  ],
];

describe("redaction of issue 12's secret shapes", () => {
  it.each(CASES)("%s", (_name, text, secret) => {
    const out = redact(text);
    expect(out).not.toContain(secret);
    expect(out).toContain("[REDACTED");
  });

  it("leaves ordinary output alone", () => {
    for (const text of [
      "mkdir -p /opt/app",
      "ps -p 1234 -o pid,cmd",
      "tar -pxf backup.tar",
      "Filesystem Size Used Avail Use% Mounted on",
      "nginx: [warn] token expired",
    ])
      expect(redact(text)).toBe(text);
  });
});
