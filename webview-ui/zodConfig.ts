// Imported first: zod must not probe `new Function` (its JIT) under the page's CSP, which
// reports even a caught attempt as a `script-src eval` violation. Schemas read this flag
// when they are constructed, so it has to be set before the protocol module loads.
import * as z from 'zod/mini';

z.config({ jitless: true });
