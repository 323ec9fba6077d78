// The webview's handle on VS Code: posting to the host and the state VS Code keeps across
// reloads and (through the host's serializer) window restarts.

export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

let api: VsCodeApi | undefined;

/** acquireVsCodeApi may be called once per page; this caches it. */
export function vscodeApi(): VsCodeApi {
  api ??= acquireVsCodeApi();
  return api;
}
