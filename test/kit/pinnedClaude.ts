// The pinned-claude finder is product code (src/agents/scripted/pinnedClaude.ts, the demo
// uses it); tests may import it from here as well.
export * from '../../src/agents/scripted/pinnedClaude';
