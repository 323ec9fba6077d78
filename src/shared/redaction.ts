// The one redaction step in front of every sink that keeps text: event payloads (the store
// redacts every payload it appends), the loop's live events (logs, the monitor,
// notifications), REFLECTIONS.md and GUARDRAILS.md, metrics lines, agents' stderr tails,
// and transcripts (redactText / redactValue are what they call). Two nets:
// - the values of environment variables whose names look secret (*KEY*, *TOKEN*, *SECRET*,
//   *PASSWORD*, *CREDENTIAL*, ...), whatever their shape: Ralph's own environment and the
//   values the engine registers (the agents' environment);
// - common credential shapes (sk-ant-…, sk-…, ghp_…, github_pat_…, AKIA…, xox?-…, PEM
//   private keys, JWTs, Bearer headers, `password=…`), each keeping its harmless prefix.
// Redaction is applied where text is written, not where it is read: what an agent quotes
// never lands, and nothing downstream has to remember to scrub.

export const REDACTED = '[REDACTED]';

// `AUTH` only as a word of the name (GITHUB_AUTH, NPM_AUTH_TOKEN), not XAUTHORITY or AUTHOR.
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|COOKIE|PRIVATE|(?:^|[_-])AUTH(?:[_-]|$)/i;

/** Whether an environment variable's name says its value is a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

// Values too short or too plain to be a secret, or that are paths (SSH_AUTH_SOCK, *_KEY_FILE):
// replacing those everywhere would only break paths and words in what is kept.
function worthRedacting(value: string): boolean {
  if (value.length < 8) return false;
  if (/^(true|false|yes|no|on|off|null|none|\d+)$/i.test(value)) return false;
  if (/^(\/|~\/|[A-Za-z]:[\\/])[^\s]*$/.test(value)) return false;
  return true;
}

/** Values of environment variables whose name looks like a secret, longest first. */
export function secretValuesOf(env: Readonly<Record<string, string | undefined>>): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isSecretName(name) && worthRedacting(value)) out.add(value);
  }
  // Longest first so a secret that contains another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

// Shapes of credentials that leak through answers, output and error messages; each keeps
// the harmless prefix (a header or key name) so the text stays readable.
const SECRET_SHAPES: readonly { readonly re: RegExp; readonly keep: (groups: readonly string[]) => string }[] = [
  { re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, keep: () => '' },
  { re: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{8,}/g, keep: () => '' },
  { re: /\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{12,}/g, keep: () => '' },
  { re: /\bxox[a-z]-[A-Za-z0-9-]{8,}/g, keep: () => '' },
  { re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, keep: () => '' },
  { re: /\bAIza[0-9A-Za-z_-]{20,}/g, keep: () => '' },
  { re: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, keep: () => '' },
  { re: /\b(Bearer|Basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, keep: (g) => `${g[1] ?? ''}${g[2] ?? ''}` },
  {
    re: /\b([\w-]*(?:api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|token)["']?\s*[:=]\s*["']?)([^\s"',;&]{4,})/gi,
    keep: (g) => g[1] ?? '',
  },
];

// A word every shape above needs (case aside): a text with none of them and none of the
// known values is returned as it is, without the nine replaces (most of an append's cost).
const SHAPE_HINT = /-----BEGIN|sk-|gh[pousr]_|github_pat_|xox[a-z]-|AKIA|ASIA|AIza|eyJ|bearer|basic|key|token|secret|passw/i;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replaces given secret values and credential-shaped substrings; a value-set compiled once. */
export class Redactor {
  private readonly values = new Set<string>();
  private valuesRe: RegExp | null = null;
  /** valuesRe without the global flag, whose test() keeps no lastIndex between calls. */
  private valuesTest: RegExp | null = null;
  private dirty = false;

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /** More secret values (short or plain ones are ignored, see secretValuesOf). */
  add(values: Iterable<string>): this {
    for (const v of values) {
      if (worthRedacting(v) && !this.values.has(v)) {
        this.values.add(v);
        this.dirty = true;
      }
    }
    return this;
  }

  /** The secret values of an environment (by variable name). */
  addEnv(env: Readonly<Record<string, string | undefined>>): this {
    return this.add(secretValuesOf(env));
  }

  private compiled(): RegExp | null {
    if (this.dirty) {
      const sorted = [...this.values].sort((a, b) => b.length - a.length);
      this.valuesRe = sorted.length === 0 ? null : new RegExp(sorted.map(escapeRegExp).join('|'), 'g');
      this.valuesTest = this.valuesRe === null ? null : new RegExp(this.valuesRe.source);
      this.dirty = false;
    }
    return this.valuesRe;
  }

  /** `text` with every known secret value and credential shape replaced by [REDACTED]. */
  text(text: string, extra: readonly string[] = []): string {
    if (text.length < 8) return text;
    if (extra.length === 0 && !SHAPE_HINT.test(text)) {
      this.compiled();
      if (this.valuesTest === null || !this.valuesTest.test(text)) return text;
    }
    return this.scrub(text, extra);
  }

  /** text() without its quick check (the tests hold the two to the same answers). */
  scrub(text: string, extra: readonly string[] = []): string {
    if (text.length < 8) return text;
    let out = text;
    for (const v of extra) if (worthRedacting(v)) out = out.split(v).join(REDACTED);
    const re = this.compiled();
    if (re !== null) out = out.replace(re, REDACTED);
    for (const shape of SECRET_SHAPES) {
      out = out.replace(shape.re, (...m: unknown[]) => {
        const groups = m.filter((g): g is string => typeof g === 'string');
        return groups[0]?.includes(REDACTED) === true ? (groups[0] ?? '') : `${shape.keep(groups)}${REDACTED}`;
      });
    }
    return out;
  }

  /**
   * A JSON-like value with every string redacted, except those under keys that name ids,
   * paths and hashes (a task id or patch path shaped like a key must stay the id it is).
   * Returns the same object when nothing changed.
   */
  value<T>(v: T): T {
    return this.walk(v, undefined) as T;
  }

  private walk(v: unknown, key: string | undefined): unknown {
    if (typeof v === 'string') return key !== undefined && STRUCTURAL_KEY.test(key) ? v : this.text(v);
    // Copies are made only from the first change on: most payloads have nothing to redact,
    // and every appended event's payload comes through here.
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        const r = this.walk(x, key);
        if (out === undefined && r !== x) out = v.slice(0, i);
        out?.push(r);
      }
      return out ?? v;
    }
    if (v !== null && typeof v === 'object') {
      const src = v as Record<string, unknown>;
      const keys = Object.keys(src);
      let out: Record<string, unknown> | undefined;
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const x = src[k];
        const r = this.walk(x, k);
        if (out === undefined && r !== x) {
          out = {};
          for (let j = 0; j < i; j++) out[keys[j] as string] = src[keys[j] as string];
        }
        if (out !== undefined) out[k] = r;
      }
      return out ?? v;
    }
    return v;
  }
}

// Fields that hold identifiers, not prose: ids (task_id, patch_id, entity ids), paths, hashes,
// file lists, statuses. Their values follow grammars (src/domain/ids.ts) or come from git.
const STRUCTURAL_KEY = /^(?:id|[a-z_]*_id|[a-z_]*_path|path|file|files|commit_hash|commit|base_commit|parent_task|old_status|new_status)$/;

// The process-wide redactor: Ralph's own environment, plus what the engine registers.
let shared: Redactor | undefined;

function processRedactor(): Redactor {
  return (shared ??= new Redactor().addEnv(process.env));
}

/**
 * Forgets what the process-wide redactor knows, so the next use builds it again from
 * process.env as it is then: the warm `ralph` process (src/cli/warmServer.ts) runs each
 * call in its caller's environment, whose secrets are that call's to redact.
 */
export function resetProcessRedactor(): void {
  shared = undefined;
}

/** Adds secret values (e.g. the agents' environment) to what every sink redacts from now on. */
export function registerSecretValues(values: Iterable<string>): void {
  processRedactor().add(values);
}

/** Adds the secret values of an environment (by variable name) to what every sink redacts. */
export function registerSecretEnv(env: Readonly<Record<string, string | undefined>>): void {
  processRedactor().addEnv(env);
}

/** Redacts one text with the process-wide redactor (plus `extra` values). */
export function redactText(text: string, extra: readonly string[] = []): string {
  return processRedactor().text(text, extra);
}

/** Redacts every string of a JSON-like value with the process-wide redactor. */
export function redactValue<T>(v: T): T {
  return processRedactor().value(v);
}

/** Redacts command-line arguments: values after secret-looking flags, and secrets anywhere. */
export function redactArgs(args: readonly string[], extra: readonly string[] = []): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const prev = i > 0 ? (args[i - 1] ?? '') : '';
    if (/^--?[\w-]*(key|token|secret|password)[\w-]*$/i.test(prev)) out.push(REDACTED);
    else out.push(redactText(arg, extra));
  }
  return out;
}
