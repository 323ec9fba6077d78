// The ids of Ralph's chat surfaces, spelled as package.json contributes them: the `@ralph`
// participant and its commands, the story document and command, the MCP server definition
// provider. Tool names come from the catalogue (src/mcp/tools.ts, `ralph_<name>`).
export const ChatIds = {
  participant: 'ralph.chat',
  /** Opens a task's story as a markdown document. */
  showTaskStory: 'ralph.showTaskStory',
  mcpProvider: 'ralph.mcp',
  /** Read-only story documents: ralph-story:/<task id>.md */
  storyScheme: 'ralph-story',
} as const;

export const PARTICIPANT_COMMANDS = ['status', 'add', 'why', 'approve', 'reject', 'modify', 'pause', 'resume', 'stop'] as const;
export type ParticipantCommand = (typeof PARTICIPANT_COMMANDS)[number];

/** Who decides through VS Code's chat surfaces (the events' actor). */
export const CHAT_ACTORS = {
  /** A person typed the participant's slash command. */
  participant: 'human',
  /** A model in agent mode called a tool, after the person confirmed it. */
  tool: 'lm-tool',
} as const;
