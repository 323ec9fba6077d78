// The Disposable base every long-lived host object extends: children registered with
// `_register` are disposed with it, in reverse order, and a registration after disposal is
// disposed at once (so a late async callback cannot leak a listener).

export interface DisposableLike {
  dispose(): unknown;
}

export abstract class Disposable implements DisposableLike {
  private readonly _toDispose: DisposableLike[] = [];
  private _isDisposed = false;

  protected get isDisposed(): boolean {
    return this._isDisposed;
  }

  protected _register<T extends DisposableLike>(d: T): T {
    if (this._isDisposed) d.dispose();
    else this._toDispose.push(d);
    return d;
  }

  dispose(): void {
    if (this._isDisposed) return;
    this._isDisposed = true;
    disposeAll(this._toDispose);
  }
}

/** Disposes in reverse order of registration; one failure does not stop the rest. */
export function disposeAll(list: DisposableLike[]): void {
  while (list.length > 0) {
    try {
      list.pop()?.dispose();
    } catch {
      // keep disposing the others
    }
  }
}

/** A restartable list: everything that lives as long as one loop run. */
export class DisposableStore extends Disposable {
  add<T extends DisposableLike>(d: T): T {
    return this._register(d);
  }
}
