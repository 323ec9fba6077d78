// Mocha's required module (the .mocharc files): the `ralph` calls tests make run in their
// own process, as they did before the warm process existed (src/cli/warmAddress.ts). A test
// that kills a call mid-write must kill the process doing the write, and a warm process
// left behind by one test must not serve the next. The warm process's own tests turn it on
// for their calls (test/int/cli/warmProcess.int.test.ts).
process.env['RALPH_CLI_SERVER'] ??= '0';
