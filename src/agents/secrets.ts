// Secret redaction for everything an agent run writes to logs: metrics lines, stderr tails,
// error messages. Two nets: values of secret-looking environment variables (exact match,
// whatever their shape) and well-known key shapes (sk-..., ghp_..., Bearer ..., AKIA...).

const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)/i;

export const REDACTED = '[REDACTED]';

// Shapes of credentials that leak through arguments and error messages; each keeps the
// harmless prefix (a header or key name) so the log stays readable.
const SECRET_SHAPES: readonly { readonly re: RegExp; readonly keep: (m: RegExpExecArray | string[]) => string }[] = [
  { re: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{8,}/g, keep: () => '' },
  { re: /\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{12,}/g, keep: () => '' },
  { re: /\bxox[abprs]-[A-Za-z0-9-]{8,}/g, keep: () => '' },
  { re: /\bAKIA[0-9A-Z]{16}\b/g, keep: () => '' },
  { re: /\bAIza[0-9A-Za-z_-]{20,}/g, keep: () => '' },
  { re: /\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, keep: (m) => `${m[1] ?? ''}${m[2] ?? ''}` },
  {
    re: /\b([\w-]*(?:api[_-]?key|access[_-]?token|auth[_-]?token|password|secret)["']?\s*[:=]\s*["']?)([^\s"',;&]{4,})/gi,
    keep: (m) => m[1] ?? '',
  },
  { re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, keep: () => '' },
];

/** Values of environment variables whose name looks like a secret (length >= 6 to avoid noise). */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= 6 && SECRET_NAME.test(name)) out.push(value);
  }
  // Longest first so a secret that contains another is replaced whole.
  return out.sort((a, b) => b.length - a.length);
}

/** Replaces known secret values and credential-shaped substrings with [REDACTED]. */
export function redactSecrets(text: string, knownSecrets: readonly string[] = []): string {
  let out = text;
  for (const secret of knownSecrets) {
    if (secret.length > 0) out = out.split(secret).join(REDACTED);
  }
  for (const shape of SECRET_SHAPES) {
    out = out.replace(shape.re, (...m: unknown[]) => {
      const groups = m.filter((g): g is string => typeof g === 'string');
      const kept = shape.keep(groups);
      return groups[0]?.includes(REDACTED) === true ? (groups[0] ?? '') : `${kept}${REDACTED}`;
    });
  }
  return out;
}

/** Redacts command-line arguments: values after secret-looking flags and secret shapes. */
export function redactArgs(args: readonly string[], knownSecrets: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const prev = i > 0 ? (args[i - 1] ?? '') : '';
    if (/^--?[\w-]*(key|token|secret|password)[\w-]*$/i.test(prev)) out.push(REDACTED);
    else out.push(redactSecrets(arg, knownSecrets));
  }
  return out;
}
