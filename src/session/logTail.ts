// The last log lines of the loop this host runs, for the monitor: bounded, oldest dropped.
import type { LoopEvent } from '../loop/events';
import type { LogLine } from '../protocol/monitor';

const MAX_LOG_LINES = 200;

export class LogTail {
  private readonly lines: LogLine[] = [];

  add(e: Extract<LoopEvent, { type: 'log' }>, at = new Date()): void {
    this.lines.push({ ts: at.toISOString(), level: e.level, text: `${e.agent}: ${e.message}` });
    if (this.lines.length > MAX_LOG_LINES) this.lines.splice(0, this.lines.length - MAX_LOG_LINES);
  }

  recent(): readonly LogLine[] {
    return this.lines;
  }
}
