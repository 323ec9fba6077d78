// Random hex for unique file names (temporaries, tickets, claims, inbox ids). Every such name
// also carries the process id and a time, so the hex only has to tell apart names one process
// makes in the same instant: Math.random does that, and no name is a secret. node:crypto is
// not used: loading it costs a short-lived `ralph` call some fifteen internal modules.

/** `bytes` random bytes as lowercase hex (2 characters each). */
export function randomHex(bytes: number): string {
  let out = '';
  for (let i = 0; i < bytes; i++)
    out += Math.floor(Math.random() * 256)
      .toString(16)
      .padStart(2, '0');
  return out;
}
