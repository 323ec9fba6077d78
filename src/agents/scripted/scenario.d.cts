// Types of scenario.cjs (the scenario format; see test/kit/README.md).
import type { z } from 'zod';

export type ToolCall =
  | { tool: 'write'; path: string; content: string }
  | { tool: 'edit'; path: string; old: string; new: string }
  | { tool: 'bash'; command: string }
  | { tool: 'mcp'; server: string; name: string; input: Record<string, unknown> }
  | { tool: 'read'; path: string };

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface Turn {
  text?: string;
  tools: ToolCall[];
  structured?: unknown;
  usage?: Usage;
  error?: { status: number; message: string; times?: number };
  hang: boolean;
  delayMs: number;
  garbage?: { lines: number; bytesPerLine: number; binary: boolean };
  crash?: { signal?: 'SIGKILL' | 'SIGSEGV' | 'SIGABRT'; code: number };
  noResult?: boolean;
}

export interface Script {
  name: string;
  match?: string;
  agent?: 'claude' | 'codex';
  model: string;
  turns: Turn[];
  after: 'end' | 'repeat';
}

export interface Scenario {
  scripts: Script[];
}

/** What authors write: defaults may be left out; a single script stands for a one-script scenario. */
export type ScenarioInput = Record<string, unknown>;

export declare const scenarioSchema: z.ZodType<Scenario>;
export declare class ScenarioError extends Error {
  readonly source: string;
  constructor(source: string, message: string);
}
export declare function parseScenario(value: unknown, source?: string): Scenario;
export declare function loadScenario(pathOrJson: string): Scenario;
export declare function selectScript(scenario: Scenario, promptText: string, agent: 'claude' | 'codex'): Script | undefined;
export declare const END_TURN: Turn;
export declare function turnAt(script: Script, index: number): Turn;
export declare const DEFAULT_USAGE: Usage;
export declare function claudePrice(model: string): { input: number; output: number; cacheRead: number; cacheCreate: number };
export declare function applyPatchText(call: ToolCall): string;
