// What a line of human text (a task title, a source reference) may hold, for every input
// that names a task: BACKLOG.md rows, proposals, the inbox's add-task. A NUL or another
// control character would be cut or garbled by the readers downstream (SQLite clients in C
// end a string at NUL; terminals and tree views interpret escapes), and a title has to fit
// a tree row and a prompt line. Pure.

/** The longest task title accepted (the reference's are a line of under 100). */
export const MAX_TITLE_LENGTH = 300;

/** The longest source reference or dependency list cell accepted. */
export const MAX_CELL_LENGTH = 500;

// C0 controls but tab, DEL, C1 controls; U+FFFD is what invalid UTF-8 decodes to.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const NOT_TEXT = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\ufffd]/u;

function describeChar(c: string): string {
  const code = c.codePointAt(0) ?? 0;
  if (code === 0) return 'a NUL byte';
  if (code === 0xfffd) return 'bytes that are not UTF-8 (U+FFFD)';
  return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `s` is not one line of text (its first offending character and where), or undefined. */
export function textProblem(s: string): string | undefined {
  const m = NOT_TEXT.exec(s);
  return m ? `contains ${describeChar(m[0])} at character ${m.index + 1}` : undefined;
}

/** Why `title` cannot be a task title, or undefined. */
export function titleProblem(title: string): string | undefined {
  const bad = textProblem(title);
  if (bad) return `title ${bad}`;
  if ([...title].length > MAX_TITLE_LENGTH) return `title is ${[...title].length} characters long; the limit is ${MAX_TITLE_LENGTH}`;
  return undefined;
}
