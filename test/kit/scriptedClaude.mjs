#!/usr/bin/env node
// The scripted claude executable is product code (src/agents/scripted/scriptedClaude.mjs);
// a test that runs this path runs that one, with the same argv, stdin and environment.
import '../../src/agents/scripted/scriptedClaude.mjs';
