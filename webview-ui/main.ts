// The monitor webview's entry (browser code). Filled in by the extension issue.
export {};
