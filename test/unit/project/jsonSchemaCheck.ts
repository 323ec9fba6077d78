// A small JSON Schema (draft-07 subset) validator for the tests: enough of the keywords
// z.toJSONSchema emits (type, properties, required, additionalProperties, items, enum,
// const, anyOf, oneOf, allOf, minimum/maximum, minLength, minItems, maxItems, pattern) to check
// that the generated schema accepts good configs and rejects bad ones the way VS Code will.

type Schema = Record<string, unknown>;

function typeOk(t: string, v: unknown): boolean {
  switch (t) {
    case 'object':
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'null':
      return v === null;
    default:
      throw new Error(`jsonSchemaCheck: unsupported type ${t}`);
  }
}

const KNOWN = new Set([
  '$schema',
  'title',
  'description',
  'default',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'propertyNames',
]);

/** Returns the list of violations (empty = valid). Throws on keywords it does not know. */
export function checkJsonSchema(schema: Schema, value: unknown, at = '$'): string[] {
  for (const k of Object.keys(schema)) if (!KNOWN.has(k)) throw new Error(`jsonSchemaCheck: unsupported keyword ${k} at ${at}`);
  const errors: string[] = [];
  if (typeof schema['type'] === 'string' && !typeOk(schema['type'], value)) return [`${at}: expected ${schema['type']}`];
  if (Array.isArray(schema['enum']) && !schema['enum'].some((e) => JSON.stringify(e) === JSON.stringify(value)))
    errors.push(`${at}: not in enum`);
  if ('const' in schema && JSON.stringify(schema['const']) !== JSON.stringify(value)) errors.push(`${at}: not const`);
  if (Array.isArray(schema['anyOf']) && !schema['anyOf'].some((s) => checkJsonSchema(s as Schema, value, at).length === 0))
    errors.push(`${at}: no anyOf branch matches`);
  if (Array.isArray(schema['oneOf']) && schema['oneOf'].filter((s) => checkJsonSchema(s as Schema, value, at).length === 0).length !== 1)
    errors.push(`${at}: not exactly one oneOf branch`);
  if (Array.isArray(schema['allOf'])) for (const s of schema['allOf']) errors.push(...checkJsonSchema(s as Schema, value, at));
  if (typeof value === 'number') {
    if (typeof schema['minimum'] === 'number' && value < schema['minimum']) errors.push(`${at}: below minimum`);
    if (typeof schema['maximum'] === 'number' && value > schema['maximum']) errors.push(`${at}: above maximum`);
    if (typeof schema['exclusiveMinimum'] === 'number' && value <= schema['exclusiveMinimum'])
      errors.push(`${at}: not above exclusiveMinimum`);
    if (typeof schema['exclusiveMaximum'] === 'number' && value >= schema['exclusiveMaximum'])
      errors.push(`${at}: not below exclusiveMaximum`);
  }
  if (typeof value === 'string') {
    if (typeof schema['minLength'] === 'number' && value.length < schema['minLength']) errors.push(`${at}: too short`);
    if (typeof schema['maxLength'] === 'number' && value.length > schema['maxLength']) errors.push(`${at}: too long`);
    if (typeof schema['pattern'] === 'string' && !new RegExp(schema['pattern'], 'u').test(value))
      errors.push(`${at}: does not match pattern`);
  }
  if (Array.isArray(value)) {
    if (typeof schema['minItems'] === 'number' && value.length < schema['minItems']) errors.push(`${at}: too few items`);
    if (typeof schema['maxItems'] === 'number' && value.length > schema['maxItems']) errors.push(`${at}: too many items`);
    if (schema['items'] && typeof schema['items'] === 'object')
      value.forEach((v, i) => errors.push(...checkJsonSchema(schema['items'] as Schema, v, `${at}[${i}]`)));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (schema['properties'] ?? {}) as Record<string, Schema>;
    for (const r of (schema['required'] ?? []) as string[]) if (!(r in obj)) errors.push(`${at}: missing ${r}`);
    for (const [k, v] of Object.entries(obj)) {
      if (props[k]) errors.push(...checkJsonSchema(props[k], v, `${at}.${k}`));
      else if (schema['additionalProperties'] === false) errors.push(`${at}: unknown property ${k}`);
      else if (schema['additionalProperties'] && typeof schema['additionalProperties'] === 'object')
        errors.push(...checkJsonSchema(schema['additionalProperties'] as Schema, v, `${at}.${k}`));
    }
  }
  return errors;
}
