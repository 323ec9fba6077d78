// Command links in chat answers and the task story: a task id reveals the task in the
// Backlog, a patch id opens its diff, "story" opens the task's story, a commit opens its diff
// and a file at a commit opens as it was there. The markdown that carries them must trust exactly
// these commands.
import * as vscode from 'vscode';
import type { StoryLinks } from '../../control/story';
import { Commands } from '../ids';
import { ChatIds } from './chatIds';

export const LINKED_COMMANDS: readonly string[] = [
  Commands.revealTask,
  Commands.openPatchDiff,
  ChatIds.showTaskStory,
  Commands.showMonitor,
  Commands.openTranscript,
  Commands.openCommit,
  Commands.openFileAtCommit,
];

export function commandUri(command: string, ...args: unknown[]): string {
  return `command:${command}?${encodeURIComponent(JSON.stringify(args))}`;
}

/** Links into the story's own folder (`folder`: its project directory) when it is known. */
export function commandLinks(folder?: string): StoryLinks {
  const args = (id: string): unknown[] => (folder !== undefined ? [id, folder] : [id]);
  return {
    task: (id) => commandUri(Commands.revealTask, ...args(id)),
    patch: (id) => commandUri(Commands.openPatchDiff, ...args(id)),
    transcript: (file) => commandUri(Commands.openTranscript, ...args(file)),
    commit: (hash) => commandUri(Commands.openCommit, ...args(hash)),
    file: (file, hash) => commandUri(Commands.openFileAtCommit, file, ...args(hash)),
  };
}

/** Markdown whose links may run the linked commands (and nothing else). */
export function trustedMarkdown(text: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(text);
  md.isTrusted = { enabledCommands: [...LINKED_COMMANDS] };
  return md;
}
