// The scripted backend: the Claude backend pointed at scripted/scriptedClaude.mjs (run by
// Node), which speaks Claude's stream-json and plays a scenario file. For fast tests and
// the demo; the scenario (a file path or inline JSON) travels in RALPH_SCENARIO.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createClaudeBackend } from './claudeBackend';
import { nodeModulesAbove } from './sandbox/bwrap';
import { allowListedEnv } from './sandbox/environment';
import type { Confinement } from './sandbox/confinement';
import type { AgentBackend } from './types';

export interface ScriptedBackendOptions {
  /** A scenario file path or inline scenario JSON. */
  readonly scenario: string;
  /** Path of scriptedClaude.mjs; default found from the source tree or the bundle. */
  readonly scriptPath?: string;
  readonly baseEnv?: Readonly<Record<string, string | undefined>>;
  readonly graceMs?: number;
  /** How the process is confined (sandbox/confinement.ts); default none. */
  readonly confinement?: Confinement;
}

export class ScriptedClaudeNotFoundError extends Error {
  override readonly name = 'ScriptedClaudeNotFoundError';
  constructor(readonly searched: readonly string[]) {
    super(`scriptedClaude.mjs not found; searched: ${searched.join(', ')}`);
  }
}

/** Locates scripted/scriptedClaude.mjs from src/agents (sources) or dist (bundle). */
export function defaultScriptedClaudePath(): string {
  const candidates = [
    resolve(__dirname, 'scripted', 'scriptedClaude.mjs'),
    resolve(__dirname, '..', 'src', 'agents', 'scripted', 'scriptedClaude.mjs'),
    join(process.cwd(), 'src', 'agents', 'scripted', 'scriptedClaude.mjs'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (found === undefined) throw new ScriptedClaudeNotFoundError(candidates);
  return found;
}

export function createScriptedBackend(options: ScriptedBackendOptions): AgentBackend {
  const script = options.scriptPath ?? defaultScriptedClaudePath();
  // The scenario is a file path or inline JSON; a path must stay readable when confined, and
  // so must the script's folder (it imports its siblings) and the node_modules it resolves
  // zod from (Ralph's own root is not known when Ralph runs from a bundle elsewhere).
  const scenarioFile = options.scenario.trimStart().startsWith('{') ? [] : [options.scenario];
  return createClaudeBackend({
    id: 'scripted',
    cli: 'scripted',
    command: process.execPath,
    commandArgs: [script],
    baseEnv: { ...(options.baseEnv ?? allowListedEnv('scripted', process.env)), RALPH_SCENARIO: options.scenario },
    readable: [dirname(script), ...nodeModulesAbove(script), ...scenarioFile],
    ...(options.confinement !== undefined ? { confinement: options.confinement } : {}),
    ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
  });
}
