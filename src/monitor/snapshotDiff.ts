// What changed between two snapshots, as the top-level keys an `update` message carries.
// Keys compare by their JSON, so a recomputed but equal section is not resent.
import type { MonitorSnapshot, MonitorSnapshotPatch } from '../protocol/monitor';

/** The keys of `next` whose value differs from `prev`; `generatedAt` only when others do. */
export function diffSnapshot(prev: MonitorSnapshot, next: MonitorSnapshot): MonitorSnapshotPatch {
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(next) as (keyof MonitorSnapshot)[]) {
    if (key === 'generatedAt') continue;
    if (JSON.stringify(prev[key]) !== JSON.stringify(next[key])) patch[key] = next[key];
  }
  if (Object.keys(patch).length > 0) patch['generatedAt'] = next.generatedAt;
  return patch as MonitorSnapshotPatch;
}
