// Redaction of secrets from command output and errors, applied before
// anything is stored, logged or shown to the model. Invariant: configured
// secret values, private key blocks and common token shapes never survive;
// what replaces them says what kind of thing was there.

const MASK = "[REDACTED]";

const PATTERNS: [RegExp, string | ((m: string, ...g: string[]) => string)][] = [
  // PEM / OpenSSH private key blocks (also a block cut short by the output cap).
  [/-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----[\s\S]*?(-----END \1PRIVATE KEY-----|$)/g, "[REDACTED PRIVATE KEY]"],
  // Anthropic, OpenAI, GitHub, GitLab, Slack, AWS, Stripe-style tokens.
  [/\bsk-ant-[A-Za-z0-9_-]{10,}/g, MASK],
  [/\bsk-(proj-)?[A-Za-z0-9_-]{20,}/g, MASK],
  [/\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, MASK],
  [/\bglpat-[A-Za-z0-9_-]{20,}/g, MASK],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, MASK],
  [/\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, MASK],
  [/\b[rs]k_live_[A-Za-z0-9]{16,}/g, MASK],
  // JWTs.
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
  // Authorization headers, whatever the scheme (the whole credential, to the end of the line).
  // A well-known scheme word stays readable ("Bearer [REDACTED]"); it is no secret.
  [
    /\b((?:Proxy-)?Authorization:\s*(?:(?:Bearer|Basic|Digest|Token|Negotiate|NTLM|Bot|AWS4-HMAC-SHA256)\s+)?)[^\r\n]+/gi,
    (_m, p: string) => `${p}${MASK}`,
  ],
  // PGP private key blocks (also cut short by the output cap).
  [/-----BEGIN PGP PRIVATE KEY BLOCK-----[\s\S]*?(-----END PGP PRIVATE KEY BLOCK-----|$)/g, "[REDACTED PGP PRIVATE KEY]"],
  // mysql -p<password> / --password=<password> (the value is glued to the option).
  [/\b((?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p)(?!\s)([^\s'"]+)/g, (_m, p: string) => `${p}${MASK}`],
  [/(--password[= ])(\S+)/g, (_m, p: string) => `${p}${MASK}`],
  // PGPASSWORD value / PASSWORD value, separated by a space rather than = or :.
  [
    /\b((?:[A-Z0-9_]*_)?(?:PGPASSWORD|PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY)\s+)(?![=:])(["']?)([^\s"']{4,})\2/g,
    (_m, p: string) => `${p}${MASK}`,
  ],
  // Shadow-style password hashes: $1$, $5$, $6$, $y$, $2b$... (user:$6$salt$hash:...).
  [/\$(1|2[abxy]?|5|6|7|y|gy|sha1|md5)\$(?:[^\s:$]*\$){1,2}[./A-Za-z0-9]{8,}/g, MASK],
  // kubeconfig credentials.
  [/\b((?:client-key-data|client-certificate-data|token|id-token|refresh-token|password):\s*)(\S{8,})/g, (_m, p: string) => `${p}${MASK}`],
  // Credentials in URLs: scheme://user:password@host.
  [/\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s@/]+@/gi, (_m, p: string) => `${p}${MASK}@`],
  // key=value / key: value for secret-sounding keys.
  [
    /\b((?:[A-Z0-9_]*_)?(?:PASSWORD|PASSWD|PASS|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY)[A-Z0-9_]*["']?\s*[=:]\s*["']?)([^\s"']{4,})/gi,
    (_m, p: string) => `${p}${MASK}`,
  ],
];

export type Redactor = (text: string) => string;

export function makeRedactor(secrets: readonly string[] = []): Redactor {
  const values = [...new Set(secrets.filter((s) => s.length >= 4))].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const v of values) out = out.split(v).join(MASK);
    for (const [re, replacement] of PATTERNS) out = out.replace(re, replacement as string);
    return out;
  };
}
