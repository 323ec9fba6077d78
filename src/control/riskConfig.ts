// Reads `risk_patterns` from ralph.config.json (each tier optional, defaults otherwise),
// until the project's config module owns the whole file.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { DEFAULT_RISK_PATTERNS, type RiskPatterns } from '../domain/risk';
import { formatZodIssues } from '../domain/events';
import { ControlError } from '../domain/errors';

function buildSchema() {
  const globs = z.array(z.string().min(1));
  return z.object({ tier3: globs, tier2: globs, tier2_sources: globs, tier0: globs }).partial();
}
let schema: ReturnType<typeof buildSchema> | undefined;

/** `risk_patterns` in ralph.config.json: each tier optional (built on first use). */
export function riskPatternsSchema(): ReturnType<typeof buildSchema> {
  return (schema ??= buildSchema());
}

export class ConfigError extends ControlError {
  override readonly name = 'ConfigError';
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`${file}: ${detail}`);
  }
}

/** The project's risk patterns: ralph.config.json `risk_patterns` over the defaults. */
export function loadRiskPatterns(projectDir: string): RiskPatterns {
  const file = path.join(projectDir, 'ralph.config.json');
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return DEFAULT_RISK_PATTERNS;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(file, `not valid JSON: ${(e as Error).message}`);
  }
  const rp = (json as { risk_patterns?: unknown } | null)?.risk_patterns;
  if (rp === undefined) return DEFAULT_RISK_PATTERNS;
  const parsed = riskPatternsSchema().safeParse(rp);
  if (!parsed.success) throw new ConfigError(file, `risk_patterns: ${formatZodIssues(parsed.error)}`);
  return { ...DEFAULT_RISK_PATTERNS, ...parsed.data };
}
