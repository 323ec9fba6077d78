// A strict JSON parser that remembers where every value starts, so a config error can
// name the line and column of the offending key, and a syntax error names where the text
// stops being JSON. JSON.parse gives neither (only an offset, in a message format that
// changes between Node versions).

/** 1-based line and column. */
export interface TextPosition {
  readonly line: number;
  readonly column: number;
}

export type JsonPath = readonly (string | number)[];

export interface PositionedJson {
  readonly value: unknown;
  /** Where the value at a path starts (for object members: where the key starts). */
  positionOf(path: JsonPath): TextPosition | undefined;
}

export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`${reason} at line ${line}, column ${column}`);
  }
}

/** Path as stored in the position table: JSON of the segments, unambiguous for any key. */
function pathKey(path: JsonPath): string {
  return JSON.stringify(path);
}

/** Deeper nesting is refused (a config is three levels deep; the parser recurses per level). */
export const MAX_JSON_DEPTH = 64;

/** Parses strict JSON (RFC 8259, duplicate keys rejected); throws JsonSyntaxError. */
export function parseJsonWithPositions(text: string): PositionedJson {
  const positions = new Map<string, TextPosition>();
  let i = 0;
  // Offsets of line starts, for offset -> line/column.
  const lineStarts = [0];
  for (let k = 0; k < text.length; k++) if (text.charCodeAt(k) === 10) lineStarts.push(k + 1);

  const posAt = (offset: number): TextPosition => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] ?? 0) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (lineStarts[lo] ?? 0) + 1 };
  };
  const fail = (reason: string, at = i): never => {
    const p = posAt(at);
    throw new JsonSyntaxError(reason, p.line, p.column);
  };
  const describe = (at: number): string => {
    if (at >= text.length) return 'end of file';
    const c = text.charCodeAt(at);
    if (c === 10) return "'\\n'";
    // A NUL or another control character printed raw would vanish or garble the message.
    if (c < 0x20 || c === 0x7f) return `U+${c.toString(16).toUpperCase().padStart(4, '0')} (a control character)`;
    return `'${text[at] ?? ''}'`;
  };

  const skipWs = (): void => {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else break;
    }
  };

  const parseString = (): string => {
    const start = i;
    i++; // opening quote
    let out = '';
    while (i < text.length) {
      const c = text[i] as string;
      if (c === '"') {
        i++;
        return out;
      }
      if (c === '\\') {
        const e = text[i + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e !== undefined && simple[e] !== undefined) {
          out += simple[e];
          i += 2;
        } else if (e === 'u') {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\u escape in string', i);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
        } else {
          fail('invalid escape in string', i);
        }
        continue;
      }
      if (c.charCodeAt(0) < 0x20) fail('unescaped control character in string (strings cannot span lines)', i);
      out += c;
      i++;
    }
    return fail('unterminated string', start);
  };

  const parseNumber = (): number => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) return fail(`unexpected ${describe(i)}, expected a value`);
    i += m[0].length;
    return Number(m[0]);
  };

  const parseValue = (path: (string | number)[], keyStart?: number): unknown => {
    skipWs();
    if (path.length > MAX_JSON_DEPTH) fail(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    positions.set(pathKey(path), posAt(keyStart ?? i));
    const c = text[i];
    if (c === '{') return parseObject(path);
    if (c === '[') return parseArray(path);
    if (c === '"') return parseString();
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return parseNumber();
    for (const [word, value] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return value;
      }
    }
    if (c === "'") return fail('single quotes are not JSON; use double quotes');
    return fail(`unexpected ${describe(i)}, expected a value`);
  };

  const parseObject = (path: (string | number)[]): Record<string, unknown> => {
    const obj: Record<string, unknown> = {};
    i++;
    skipWs();
    if (text[i] === '}') {
      i++;
      return obj;
    }
    for (;;) {
      skipWs();
      if (text[i] === '}') fail('trailing comma before }');
      if (text[i] !== '"') fail(`unexpected ${describe(i)}, expected a property name in double quotes`);
      const keyStart = i;
      const key = parseString();
      if (Object.prototype.hasOwnProperty.call(obj, key)) fail(`duplicate key "${key}"`, keyStart);
      skipWs();
      if (text[i] !== ':') fail(`unexpected ${describe(i)}, expected ':' after "${key}"`);
      i++;
      // An own property even for "__proto__" (assignment would set the prototype, and the
      // schema would then read its keys as if they were written here).
      Object.defineProperty(obj, key, {
        value: parseValue([...path, key], keyStart),
        enumerable: true,
        writable: true,
        configurable: true,
      });
      skipWs();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return obj;
      }
      fail(`unexpected ${describe(i)}, expected ',' or '}'`);
    }
  };

  const parseArray = (path: (string | number)[]): unknown[] => {
    const arr: unknown[] = [];
    i++;
    skipWs();
    if (text[i] === ']') {
      i++;
      return arr;
    }
    for (;;) {
      skipWs();
      if (text[i] === ']') fail('trailing comma before ]');
      arr.push(parseValue([...path, arr.length]));
      skipWs();
      if (text[i] === ',') {
        i++;
        continue;
      }
      if (text[i] === ']') {
        i++;
        return arr;
      }
      fail(`unexpected ${describe(i)}, expected ',' or ']'`);
    }
  };

  if (text.charCodeAt(0) === 0xfeff) i = 1; // BOM
  skipWs();
  if (i >= text.length) fail('the file is empty; expected a JSON object');
  const value = parseValue([]);
  skipWs();
  if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);

  return {
    value,
    positionOf(path: JsonPath): TextPosition | undefined {
      // The nearest recorded ancestor: a missing key is reported where its object starts.
      for (let n = path.length; n >= 0; n--) {
        const p = positions.get(pathKey(path.slice(0, n)));
        if (p) return p;
      }
      return undefined;
    },
  };
}
