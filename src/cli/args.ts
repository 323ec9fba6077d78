// A small argv parser for `ralph`: positionals plus `--flag value` / `--flag=value`
// options (repeatable ones collect) and boolean switches; unknown options are errors.

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface ParsedArgs {
  readonly positionals: string[];
  readonly options: Map<string, string[]>;
  readonly switches: Set<string>;
}

export interface ArgSpec {
  /** Options that take a value, without the leading `--`. */
  readonly values?: readonly string[];
  /** Boolean switches, without the leading `--`. */
  readonly switches?: readonly string[];
}

export function parseArgs(argv: readonly string[], spec: ArgSpec): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string[]>();
  const switches = new Set<string>();
  const values = new Set(spec.values ?? []);
  const sw = new Set(spec.switches ?? []);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!a.startsWith('--') || a.length === 2) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
    if (sw.has(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      switches.add(name);
    } else if (values.has(name)) {
      let v: string | undefined;
      if (eq > 0) v = a.slice(eq + 1);
      else {
        v = argv[i + 1];
        i++;
      }
      if (v === undefined) throw new UsageError(`--${name} needs a value`);
      options.set(name, [...(options.get(name) ?? []), v]);
    } else {
      throw new UsageError(`unknown option ${a}`);
    }
  }
  return { positionals, options, switches };
}

/** The last value of an option, or undefined. */
export function opt(p: ParsedArgs, name: string): string | undefined {
  const v = p.options.get(name);
  return v === undefined ? undefined : v[v.length - 1];
}
