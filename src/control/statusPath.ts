// What `ralph status` runs, and only that: the CLI loads this instead of the control plane's
// index, so a status call does not load (and compile) the story, the inbox, proposals and
// every other command's code.
export { openControl } from './open';
export { statusFacts } from './derived';
export { parseMoment, statusFactsAt } from './timeTravel';
export { renderStatus } from '../domain/views';
export { loadSqlJs } from '../store/sqlDb';
