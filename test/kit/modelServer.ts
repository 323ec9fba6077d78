// The scripted model server is product code (src/agents/scripted/modelServer.ts, the demo
// runs it); tests may import it from here as well.
export * from '../../src/agents/scripted/modelServer';
