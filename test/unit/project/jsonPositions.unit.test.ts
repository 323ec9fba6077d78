import * as assert from 'node:assert/strict';
import { JsonSyntaxError, parseJsonWithPositions } from '../../../src/project/jsonPositions';

function syntaxError(text: string): JsonSyntaxError {
  try {
    parseJsonWithPositions(text);
  } catch (e) {
    assert.ok(e instanceof JsonSyntaxError);
    return e;
  }
  return assert.fail('expected a JsonSyntaxError');
}

describe('project/jsonPositions', () => {
  it('given valid JSON, then the same value as JSON.parse', () => {
    const text = '{"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"], "b": {"c": {}}, "d": []}';
    assert.deepEqual(parseJsonWithPositions(text).value, JSON.parse(text));
  });
  it('given nested values, then the position of each key and element', () => {
    const doc = parseJsonWithPositions('{\n  "a": {\n    "b": [10,\n      20]\n  }\n}');
    assert.deepEqual(doc.positionOf(['a']), { line: 2, column: 3 });
    assert.deepEqual(doc.positionOf(['a', 'b']), { line: 3, column: 5 });
    assert.deepEqual(doc.positionOf(['a', 'b', 1]), { line: 4, column: 7 });
    assert.deepEqual(doc.positionOf(['a', 'missing']), { line: 2, column: 3 }, 'falls back to the nearest ancestor');
  });
  it('given broken JSON, then the line and column and a reason', () => {
    const cases: [string, number, number, RegExp][] = [
      ['{"a": 1,}', 1, 9, /trailing comma/],
      ['{\n"a" 1}', 2, 5, /expected ':'/],
      ["{'a': 1}", 1, 2, /expected a property name/],
      ['{"a": "x\ny"}', 1, 9, /unescaped control character/],
      ['{"a": 1} x', 1, 10, /after the end/],
      ['{"a": 1, "a": 2}', 1, 10, /duplicate key "a"/],
      ['{"a": tru}', 1, 7, /expected a value/],
      ['{"a": [1, 2', 1, 12, /expected ',' or '\]'/],
      ['  ', 1, 3, /empty/],
    ];
    for (const [text, line, column, reason] of cases) {
      const e = syntaxError(text);
      assert.deepEqual([e.line, e.column], [line, column], text);
      assert.match(e.reason, reason, text);
    }
  });
});
