// Composition root of a REQ run, for `ralph req run|resume` and the VS Code command: loads
// ralph.config.json, opens the store as the writer, builds the configured primary backend
// (the same backends, confinement and event log as the main loop) and the ReqEngine.
import { join } from 'node:path';
import type { AgentBackend } from '../agents/types';
import { CONTROL_PROJECTIONS } from '../control/views';
import { ControlAdapter } from '../loop/controlAdapter';
import type { LoopEvent } from '../loop/events';
import { backendFromConfig } from '../loop/host';
import { settingsFromConfig } from '../loop/settings';
import type { LoopSettings } from '../loop/settings';
import { requireConfig } from '../project/config';
import type { RalphConfig } from '../project/config';
import { openStore } from '../store/sqlJsStore';
import type { EventStore } from '../store/types';
import { ReqEngine } from './engine';
import { reqSettingsFromConfig } from './settings';
import type { ReqSettings } from './settings';
import { queueLearningPromotion, queueReqDecision } from './decisions';
import { loadSpecification } from './spec';
import { reqEvents, reqFileSettings, viewOf } from './view';
import { decideReq, markLearningPermanent, REQ_DECISION_HELP, ReqDecisionError } from '../domain/reqDecide';
import type { ReqDecision } from '../domain/reqEvents';
import { toNewEvent } from '../domain/events';
import { keepingStatusImage } from '../control/statusImage';

export interface ReqHostOptions {
  readonly projectDir: string;
  readonly backend?: AgentBackend;
  readonly agentEnv?: Readonly<Record<string, string>>;
  readonly settings?: Partial<LoopSettings>;
  readonly req?: Partial<ReqSettings>;
  readonly signal?: AbortSignal;
  readonly onLine?: (line: string) => void;
  readonly onLoopEvent?: (e: LoopEvent) => void;
}

export interface ReqHost {
  readonly engine: ReqEngine;
  readonly store: EventStore;
  readonly control: ControlAdapter;
  readonly config: RalphConfig;
  close(): Promise<void>;
}

export type DecisionResult =
  | { readonly kind: 'applied'; readonly help: string }
  | { readonly kind: 'queued'; readonly file: string }
  | { readonly kind: 'refused'; readonly message: string };

/**
 * A decision on a blocked REQ: applied to the event log when no run holds the store, else
 * queued for the running engine (decisions.ts), which takes it between REQs.
 */
export async function applyReqDecision(
  projectDir: string,
  d: { req: string; decision: ReqDecision; actor: string; note?: string },
): Promise<DecisionResult> {
  const ralphDir = join(projectDir, '.ralph');
  let store: EventStore;
  try {
    store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, ...keepingStatusImage(ralphDir) });
  } catch (e) {
    if (e instanceof Error && e.name === 'StoreLockedError') return { kind: 'queued', file: queueReqDecision(ralphDir, d) };
    throw e;
  }
  try {
    const s = reqFileSettings(projectDir);
    const loaded = loadSpecification(s.specFile, s.specShownAs);
    if (!loaded.ok) return { kind: 'refused', message: loaded.error.message };
    const view = viewOf(loaded.value, reqEvents(store), s.maxIterations);
    const events = decideReq(view, d.req, d.decision, d.actor, { note: d.note ?? null });
    await store.append(events.map(toNewEvent));
    return { kind: 'applied', help: REQ_DECISION_HELP[d.decision] };
  } catch (e) {
    if (e instanceof ReqDecisionError) return { kind: 'refused', message: e.message };
    throw e;
  } finally {
    await store.close();
  }
}

/**
 * The user marks a contextual learning permanent: applied to the event log when no run holds
 * the store, else queued for the running engine, which takes it between REQs.
 */
export async function applyLearningPromotion(projectDir: string, p: { text: string; actor: string }): Promise<DecisionResult> {
  const ralphDir = join(projectDir, '.ralph');
  let store: EventStore;
  try {
    store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, ...keepingStatusImage(ralphDir) });
  } catch (e) {
    if (e instanceof Error && e.name === 'StoreLockedError') return { kind: 'queued', file: queueLearningPromotion(ralphDir, p) };
    throw e;
  }
  try {
    const s = reqFileSettings(projectDir);
    const loaded = loadSpecification(s.specFile, s.specShownAs);
    if (!loaded.ok) return { kind: 'refused', message: loaded.error.message };
    const events = markLearningPermanent(viewOf(loaded.value, reqEvents(store), s.maxIterations), p.text, p.actor);
    await store.append(events.map(toNewEvent));
    const text = events[0]?.type === 'req.learning_promoted' ? events[0].data.text : p.text;
    return { kind: 'applied', help: `'${text}' is permanent now: every REQ's context carries it` };
  } catch (e) {
    if (e instanceof ReqDecisionError) return { kind: 'refused', message: e.message };
    throw e;
  } finally {
    await store.close();
  }
}

export async function openReqHost(o: ReqHostOptions): Promise<ReqHost> {
  const config = requireConfig(o.projectDir);
  const settings: LoopSettings = { ...settingsFromConfig(config), ...o.settings };
  const req: ReqSettings = { ...reqSettingsFromConfig(o.projectDir, config), ...o.req };
  const backend = o.backend ?? backendFromConfig(config, 'primary', o.projectDir);
  const ralphDir = join(o.projectDir, '.ralph');
  const store = await openStore({ ralphDir, mode: 'writer', projections: CONTROL_PROJECTIONS, ...keepingStatusImage(ralphDir) });
  try {
    const control = new ControlAdapter({ store, projectDir: o.projectDir, ralphDir, riskPatterns: settings.riskPatterns });
    const engine = new ReqEngine({
      projectDir: o.projectDir,
      store,
      control,
      backend,
      settings,
      req,
      ...(o.agentEnv ? { agentEnv: o.agentEnv } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onLine ? { onLine: o.onLine } : {}),
      ...(o.onLoopEvent ? { onLoopEvent: o.onLoopEvent } : {}),
    });
    return { engine, store, control, config, close: () => store.close() };
  } catch (e) {
    await store.close();
    throw e;
  }
}
