// Random hex for unique file names (temporaries, tickets, claims, inbox ids). node:crypto is
// required on first use, not imported: loading it costs a short-lived `ralph` call about as
// much as its own work, and most calls (status, reads) never make such a name.
/* eslint-disable @typescript-eslint/no-require-imports */
import type * as Crypto from 'node:crypto';

let crypto: typeof Crypto | undefined;

/** `bytes` random bytes as lowercase hex (2 characters each). */
export function randomHex(bytes: number): string {
  crypto ??= require('node:crypto') as typeof Crypto;
  return crypto.randomBytes(bytes).toString('hex');
}
