// The status image: what `ralph status` needs of the event log, kept by the store's last
// writer as it closed (control/statusImage.ts writes it) together with the identity of the
// store's files at that moment. A status call that finds the files exactly so answers from
// it without opening the store. The clock-dependent answers are kept so that they stay exact
// for any later moment: every event timestamp after the last hour before the image was
// taken, today's spend, and the newest timestamp (a later day has spent nothing unless the
// log holds a timestamp in it). The file is read as hostile input: anything that is not
// exactly this shape is no image, and status opens the store instead.
import { isEffort } from './model';
import type { FinishedTask } from './forecast';
import { dayStartOf, type ForecastSamples, type SpendToday, type StatusCounts, type StatusSource } from './statusFacts';
import { lastHourCutoff, type LoopPause } from './views';
import type { SafetyFacts } from './safetyFacts';

export const STATUS_IMAGE_VERSION = 1;

/** The identity of one file of the store: absent, or its inode, size and modification time (ns). */
export type FileIdentity = { readonly ino: string; readonly size: string; readonly mtimeNs: string } | null;

/** The store's files an open reads: the image is current only while both are as they were. */
export interface StoreFilesIdentity {
  readonly db: FileIdentity;
  readonly journal: FileIdentity;
}

/** The image holds the plain counts status asks the log for as they are; the rest below. */
export interface StatusImage extends Pick<StatusSource, 'eventsTotal' | 'commits' | 'wave' | 'taskCounts' | 'patchCounts' | 'deferred'> {
  readonly version: typeof STATUS_IMAGE_VERSION;
  /** The build that kept it: another build's projections and facts may differ. */
  readonly build: string;
  readonly files: StoreFilesIdentity;
  readonly paused: LoopPause | null;
  /** The cutoff `recent` was read with: the last hour before the image was taken. */
  readonly recentAfter: string;
  /** Every event `ts` after `recentAfter`, in any order. */
  readonly recent: readonly string[];
  /** The spend of the image's own day. */
  readonly spendDay: string;
  readonly spend: SpendToday;
  /** The greatest `ts` in the log; null when it is empty. */
  readonly maxTs: string | null;
  readonly forecast: ForecastSamples;
  readonly safety: SafetyFacts;
}

export function sameFiles(a: StoreFilesIdentity, b: StoreFilesIdentity): boolean {
  const same = (x: FileIdentity, y: FileIdentity): boolean =>
    x === null || y === null ? x === y : x.ino === y.ino && x.size === y.size && x.mtimeNs === y.mtimeNs;
  return same(a.db, b.db) && same(a.journal, b.journal);
}

/**
 * The image as a source of status facts as of `now`; undefined when it cannot answer for that
 * moment exactly (a clock set back before the image, or a later day the log has timestamps in).
 */
export function imageSource(image: StatusImage, now: Date): StatusSource | undefined {
  const cutoff = lastHourCutoff(now);
  const dayStart = dayStartOf(now);
  if (cutoff < image.recentAfter || dayStart < image.spendDay) return undefined;
  const sameDay = dayStart === image.spendDay;
  if (!sameDay && image.maxTs !== null && image.maxTs >= dayStart) return undefined;
  return {
    eventsTotal: image.eventsTotal,
    commits: image.commits,
    wave: image.wave,
    taskCounts: image.taskCounts,
    patchCounts: image.patchCounts,
    deferred: image.deferred,
    paused: image.paused ?? undefined,
    eventsAfter: (ts) => image.recent.reduce((n, t) => (t > ts ? n + 1 : n), 0),
    spendSince: () => (sameDay ? image.spend : { spentUsd: 0 }),
    forecastSamples: () => image.forecast,
  };
}

// ---- reading the file: by hand, so status loads no schema library --------------------------

type Obj = Readonly<Record<string, unknown>>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const isDigits = (v: unknown): v is string => typeof v === 'string' && /^\d{1,24}$/.test(v);

function isIdentity(v: unknown): v is FileIdentity {
  return v === null || (isObj(v) && isDigits(v['ino']) && isDigits(v['size']) && isDigits(v['mtimeNs']));
}

function isCounts(v: unknown): v is StatusCounts {
  return Array.isArray(v) && v.every((p) => Array.isArray(p) && p.length === 2 && isStr(p[0]) && isCount(p[1]));
}

function isPause(v: unknown): v is LoopPause | null {
  if (v === null) return true;
  if (!isObj(v) || !isStr(v['reason']) || !isStr(v['since'])) return false;
  if (v['failureClass'] !== undefined && !isStr(v['failureClass'])) return false;
  return v['agents'] === undefined || (Array.isArray(v['agents']) && v['agents'].every(isStr));
}

function isSpend(v: unknown): v is SpendToday {
  return isObj(v) && isNum(v['spentUsd']) && (v['first'] === undefined || isStr(v['first']));
}

function isFinished(v: unknown): v is FinishedTask {
  return isObj(v) && isStr(v['effort']) && isEffort(v['effort']) && isNum(v['costUsd']) && isStr(v['startedAt']) && isStr(v['finishedAt']);
}

function isSamples(v: unknown): v is ForecastSamples {
  return (
    isObj(v) &&
    Array.isArray(v['finished']) &&
    v['finished'].every(isFinished) &&
    isCount(v['failed']) &&
    Array.isArray(v['remaining']) &&
    v['remaining'].every((e) => isStr(e) && isEffort(e))
  );
}

function isSafety(v: unknown): v is SafetyFacts {
  if (!isObj(v) || !Array.isArray(v['incidents'])) return false;
  const c = v['confinement'];
  const confinementOk =
    c === null ||
    (isObj(c) &&
      typeof c['unconfined'] === 'boolean' &&
      Array.isArray(c['roles']) &&
      c['roles'].every((r) => isObj(r) && isStr(r['role']) && isStr(r['backend']) && isStr(r['kind']) && isStr(r['summary'])));
  return (
    confinementOk &&
    v['incidents'].every(
      (i) => isObj(i) && isStr(i['id']) && isStr(i['ts']) && isStr(i['summary']) && (i['restore'] === null || isStr(i['restore'])),
    )
  );
}

/** The image in `text`, or undefined when it is not exactly a status image of this version. */
export function parseStatusImage(text: string): StatusImage | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(v) || v['version'] !== STATUS_IMAGE_VERSION || !isStr(v['build'])) return undefined;
  const files = v['files'];
  const ok =
    isObj(files) &&
    isIdentity(files['db']) &&
    isIdentity(files['journal']) &&
    isCount(v['eventsTotal']) &&
    isCount(v['commits']) &&
    isCount(v['wave']) &&
    isCounts(v['taskCounts']) &&
    isCounts(v['patchCounts']) &&
    isCount(v['deferred']) &&
    isPause(v['paused']) &&
    isStr(v['recentAfter']) &&
    Array.isArray(v['recent']) &&
    v['recent'].every(isStr) &&
    isStr(v['spendDay']) &&
    isSpend(v['spend']) &&
    (v['maxTs'] === null || isStr(v['maxTs'])) &&
    isSamples(v['forecast']) &&
    isSafety(v['safety']);
  return ok ? (v as unknown as StatusImage) : undefined;
}
