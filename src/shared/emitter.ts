// A tiny vscode-free event emitter for the engine session, so it can be tested in plain
// Node; the VS Code side wraps it where an `vscode.Event` is needed.
import type { DisposableLike } from './lifecycle';

export type Listener<T> = (value: T) => void;

export class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();

  readonly event = (listener: Listener<T>): DisposableLike => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const l of [...this.listeners]) {
      try {
        l(value);
      } catch {
        // one bad listener must not break the others
      }
    }
  }

  dispose(): void {
    this.listeners.clear();
  }
}
