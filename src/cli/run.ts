// Dispatches `ralph <command>`; each command lives in its own module under src/cli/.
const usage = `Usage: ralph <command> [args]

Commands are added issue by issue; run \`ralph help\` for the list.
`;

export async function runCli(argv: readonly string[]): Promise<number> {
  const [command] = argv;
  if (command === undefined || command === 'help' || command === '--help') {
    process.stdout.write(usage);
    return 0;
  }
  process.stderr.write(`ralph: unknown command '${command}'\n${usage}`);
  return 2;
}
