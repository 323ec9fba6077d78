// The loop with the REAL `claude` CLI (pinned, in .tools/) against the scripted model server,
// confined as the product confines it (bubblewrap here): each test of the enclosing
// `describe` gets a fresh sample project and writer store; the model server it starts, the
// claude home aimed at it and any loop still running are closed after it.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createClaudeBackend } from '../../../src/agents/claudeBackend';
import type { ClaudeBackendOptions } from '../../../src/agents/claudeBackend';
import { detectConfinement } from '../../../src/agents/sandbox';
import { startModelServer } from '../../../src/agents/scripted/modelServer';
import type { ModelServer } from '../../../src/agents/scripted/modelServer';
import { ControlAdapter } from '../../../src/loop/controlAdapter';
import type { LoopEvent } from '../../../src/loop/events';
import { Loop } from '../../../src/loop/loop';
import { JsonlMetrics } from '../../../src/loop/metricsFile';
import type { LoopSettings } from '../../../src/loop/settings';
import type { EventStore } from '../../../src/store/types';
import { claudeSandbox, ensureAgentClis } from '../../kit/agentEnv';
import type { Sandbox } from '../../kit/agentEnv';
import { createSampleProject, openSampleStore, sampleSettings } from './sampleProject';
import type { SampleProject } from './sampleProject';

export interface ClaudeLoopOptions {
  /** Claude's permission mode and confinement; default acceptEdits inside the detected sandbox. */
  readonly backend?: Pick<ClaudeBackendOptions, 'permissionMode' | 'confinement'>;
  /** Variables laid over claude's throwaway home (a secret the agent may quote, say). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /** Settings after the sample's overrides (e.g. `agentsUnconfined`). */
  readonly settings?: (s: LoopSettings) => LoopSettings;
  /** End when the backlog is empty or blocked; default true. */
  readonly once?: boolean;
}

export interface ClaudeRun {
  readonly p: SampleProject;
  readonly store: EventStore;
  /** Starts this test's scripted model server (a scenario as the server takes it). */
  serve(scenario: unknown): Promise<ModelServer>;
  /**
   * A Loop over the sample project with the real claude for every role, aimed at the server
   * `serve` started, and the list of its events (RALPH_LOOP_DEBUG=1 prints them).
   */
  loop(overrides?: Record<string, unknown>, options?: ClaudeLoopOptions): { loop: Loop; events: LoopEvent[] };
}

export function freshClaudeRunEachTest(set: (run: ClaudeRun) => void): void {
  let claudeBin = '';
  let cleanups: (() => Promise<void> | void)[] = [];
  before(() => {
    claudeBin = ensureAgentClis().claude;
  });
  beforeEach(async () => {
    const p = createSampleProject();
    const store = await openSampleStore(p.ralphDir);
    let served: { server: ModelServer; sandbox: Sandbox } | undefined;
    cleanups = [
      () => rmSync(p.dir, { recursive: true, force: true }),
      () => store.close().catch(() => undefined),
      () => served?.sandbox.cleanup(),
      () => served?.server.close(),
    ];
    set({
      p,
      store,
      async serve(scenario) {
        if (served !== undefined) throw new Error('one model server per test');
        const server = await startModelServer(scenario);
        served = { server, sandbox: claudeSandbox(server.url) };
        return server;
      },
      loop(overrides = {}, options = {}) {
        if (served === undefined) throw new Error('serve() the model first: the loop is aimed at its server');
        const base = sampleSettings(overrides);
        const settings = options.settings?.(base) ?? base;
        const backend = createClaudeBackend({
          command: claudeBin,
          baseEnv: {},
          confinement: detectConfinement('claude'),
          ...options.backend,
        });
        const loop = new Loop({
          projectDir: p.dir,
          settings,
          control: new ControlAdapter({ store, projectDir: p.dir, ralphDir: p.ralphDir, riskPatterns: settings.riskPatterns }),
          backends: { primary: backend, worker: backend, judge: backend },
          metrics: new JsonlMetrics(join(p.ralphDir, 'logs')),
          agentEnv: { ...served.sandbox.env, ...options.agentEnv },
          once: options.once ?? true,
        });
        // A loop a test left running (it failed half-way) stops before its server closes.
        cleanups.push(() =>
          loop.stop('test done').then(
            () => undefined,
            () => undefined,
          ),
        );
        const events: LoopEvent[] = [];
        const t0 = Date.now();
        loop.events.on((e) => {
          events.push(e);
          if (process.env['RALPH_LOOP_DEBUG'] && e.type !== 'gate.progress') console.log(Date.now() - t0, JSON.stringify(e).slice(0, 400));
        });
        return { loop, events };
      },
    });
  });
  afterEach(async () => {
    // Newest first: loops, then the server and claude's home, then the store and the project.
    for (const clean of cleanups.reverse()) await clean();
    cleanups = [];
  });
}
