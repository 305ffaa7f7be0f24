import { Ajv, type ErrorObject, type Options as AjvOptions, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { FastifySchemaCompiler } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { AppError, validationError, type ErrorDetail } from './errors.js';

// ajv-formats is CommonJS; its default export arrives as the module object under NodeNext.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const jsonBodyLimitBytes = 1024 * 1024;
export const uploadBodyLimitBytes = 10 * 1024 * 1024;
export const jsonDepthMax = 32;
export const validationDetailsMax = 20;

const sharedAjvOptions: AjvOptions = {
  allErrors: true,
  strict: true,
  // TypeBox marks its schemas with non-enumerable keys and our own OpenAPI keywords.
  keywords: ['example'],
};

/**
 * ajv-formats' formats, with one change: a "date-time" must also be an instant JavaScript can
 * hold. RFC 3339 allows a leap second (23:59:60), which Date cannot represent: accepted by the
 * schema, it became an Invalid Date and a 500 in the route.
 */
function withFormats(ajv: Ajv): Ajv {
  addFormats(ajv);
  const dateTime = fullFormats['date-time'] as { validate: (text: string) => boolean; compare: (a: string, b: string) => number | undefined };
  ajv.addFormat('date-time', { type: 'string', validate: (text: string) => dateTime.validate(text) && !Number.isNaN(Date.parse(text)), compare: dateTime.compare });
  return ajv;
}

/**
 * Bodies are validated strictly: no type coercion (a JSON number is not a decimal string), no
 * removal of unknown fields (they are refused), no defaults filled in.
 */
const bodyAjv = withFormats(new Ajv({ ...sharedAjvOptions, coerceTypes: false, removeAdditional: false, useDefaults: false }));
/** Query strings and path parameters arrive as text, so they are coerced; unknown ones are still refused. */
const queryAjv = withFormats(new Ajv({ ...sharedAjvOptions, coerceTypes: 'array', removeAdditional: false, useDefaults: true }));

/** Compiles a route schema now, with the Ajv of its part; throws when the strict Ajv refuses it. */
export function compileRouteSchema(schema: object, httpPart: string | undefined): ValidateFunction {
  return (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema);
}

/**
 * Each schema is compiled on the first request that needs it, not when its route is registered:
 * compiling every route's schemas up front was about a second of every start on a two-CPU machine
 * (docs/benchmarks.md, "Start and restart"). So that a schema the strict Ajv refuses cannot hide
 * until its first request, test/route-schemas.test.ts compiles every registered route's schemas.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const integers = httpPart === 'body' ? [] : integerPropertiesOf(schema);
  const singles = httpPart === 'querystring' ? singlePropertiesOf(schema) : [];
  const validate = (data: unknown): boolean => {
    const repeated = singles.length > 0 ? repeatedParameter(data, singles) : undefined;
    if (repeated !== undefined) {
      // The query parser makes an array of a parameter sent twice; Ajv then told "must be string;
      // or must be one of …" (until 2026-12-06; found by an audit).
      validate.errors = [{ instancePath: `/${repeated.name}`, schemaPath: `#/properties/${repeated.name}`, keyword: 'type', params: {}, message: `must be sent once (it was sent ${repeated.times} times)` }];
      return false;
    }
    const spelled = integers.length > 0 ? misspelledInteger(data, integers) : undefined;
    if (spelled !== undefined) {
      validate.errors = [{ instancePath: `/${spelled}`, schemaPath: `#/properties/${spelled}/type`, keyword: 'type', params: { type: 'integer' }, message: 'must be a whole number in decimal digits' }];
      return false;
    }
    compiled ??= compileRouteSchema(schema as object, httpPart);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
};

/**
 * The integer parameters of a query string or path schema. The coercing Ajv reads their text with
 * Number(), which takes 0x10, 1e1, +5, 5.0 and padding spaces; those are refused before it runs.
 */
function integerPropertiesOf(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  return Object.entries(properties)
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
}

/** The query parameters of a schema that take one value (not declared as an array, in any branch). */
function singlePropertiesOf(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const takesMany = (property: unknown): boolean => {
    const node = property as { type?: unknown; anyOf?: unknown[]; oneOf?: unknown[] } | undefined;
    if (node === undefined) return false;
    if (node.type === 'array' || (Array.isArray(node.type) && node.type.includes('array'))) return true;
    return [...(node.anyOf ?? []), ...(node.oneOf ?? [])].some(takesMany);
  };
  return Object.entries(properties)
    .filter(([, property]) => !takesMany(property))
    .map(([name]) => name);
}

/** The first one-value parameter the query string holds more than once, if any. */
function repeatedParameter(data: unknown, singles: readonly string[]): { name: string; times: number } | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const values = data as Record<string, unknown>;
  const name = singles.find((candidate) => Array.isArray(values[candidate]));
  return name === undefined ? undefined : { name, times: (values[name] as unknown[]).length };
}

const decimalInteger = /^-?[0-9]+$/;

/** The first integer parameter sent as text that is not plain decimal digits (a sign allowed), if any. */
function misspelledInteger(data: unknown, integers: readonly string[]): string | undefined {
  if (data === null || typeof data !== 'object') return undefined;
  const values = data as Record<string, unknown>;
  return integers.find((name) => typeof values[name] === 'string' && !decimalInteger.test(values[name]));
}

function jsonPointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment), '');
}

function joinPath(base: string, child: string): string {
  return base ? `${base}.${child}` : child;
}

/** Turns Ajv errors into `details` entries that name each field by its path. */
export function detailsFromAjvErrors(allErrors: readonly ErrorObject[], context: string): ErrorDetail[] {
  const rootName = context === 'body' ? 'body' : context;
  const { errors: unformed, details } = formsNotStarted(allErrors, rootName);
  const errors = closestUnionBranches(unformed);
  const seen = new Set<string>();
  // A union of constants (anyOf of literals: an event type, say) fails once per branch: one detail
  // names them all. Until 2026-12-03 each branch was a detail of its own, cut at
  // validationDetailsMax, so a list of 44 event types showed 20 (found by an audit).
  const allowedAt = new Map<string, unknown[]>();
  for (const error of errors) {
    if (error.keyword !== 'const' && error.keyword !== 'enum') continue;
    const allowed = error.params as { allowedValue?: unknown; allowedValues?: unknown[] };
    const values = allowedAt.get(error.instancePath) ?? [];
    for (const value of allowed.allowedValues ?? [allowed.allowedValue]) if (!values.includes(value)) values.push(value);
    allowedAt.set(error.instancePath, values);
  }
  for (const error of errors) {
    if (details.length >= validationDetailsMax) break;
    // A nullable object (anyOf object | null) given an object with a wrong field fails both
    // branches; the null branch's "must be null" would tell the client to drop the whole object.
    const insideThisObject = (other: ErrorObject) =>
      other.instancePath.startsWith(`${error.instancePath}/`) ||
      (other.instancePath === error.instancePath && (other.keyword === 'required' || other.keyword === 'additionalProperties'));
    if (error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null' && errors.some(insideThisObject)) continue;
    let field = jsonPointerToPath(error.instancePath);
    let message = error.message ?? 'is invalid';
    if (error.keyword === 'required') {
      field = joinPath(field, String((error.params as { missingProperty: string }).missingProperty));
      message = 'is required';
    } else if (error.keyword === 'additionalProperties') {
      const name = String((error.params as { additionalProperty: string }).additionalProperty);
      field = joinPath(field, name);
      message = context === 'body' ? 'is not a known field' : 'is not a known query parameter';
      // A name that is empty (`?=5`, `{"": 1}`) is told so, where it was named as the whole query
      // string or body, "not a known query parameter" (until 2026-12-08; found by an audit).
      if (name === '') message = context === 'body' ? 'holds a field with an empty name, which no field has' : 'holds a parameter with an empty name (as in ?=5), which no parameter has';
    } else if (error.keyword === 'const' || error.keyword === 'enum') {
      const values = allowedAt.get(error.instancePath) ?? [];
      message = `must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`;
    } else if (error.keyword === 'uniqueItems') {
      const { i, j } = error.params as { i: number; j: number };
      message = `must not repeat an item (items ${Math.min(i, j)} and ${Math.max(i, j)} are the same)`;
    } else if (error.keyword === 'anyOf' || error.keyword === 'oneOf') {
      // The branch errors carry the useful text; this summary adds nothing.
      if (errors.some((other) => other !== error && (other.instancePath === error.instancePath || other.schemaPath.startsWith(`${error.schemaPath}/`)))) continue;
      message = 'does not match any allowed form';
    }
    if (!field) field = rootName;
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push({ field, message });
  }
  // Several branch errors of one union on the same field read best as one line.
  return mergeUnionDetails(details);
}

/**
 * A union of object shapes given an object that has no field of any of them (`{}` or `{"foo": 1}`
 * sent to the vault reveal): every branch fails only for its required fields (and for the fields
 * none of them knows), and no branch is closer than another.
 * One detail names the forms, each by its required fields, in place of the branches' "is required"
 * lines (until 2026-12-07 the forms missing the fewest fields were named, so `{}` was told
 * "aliases is required; documents is required", without the card form; found by an audit).
 */
function formsNotStarted(errors: readonly ErrorObject[], rootName: string): { errors: readonly ErrorObject[]; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const dropped = new Set<ErrorObject>();
  for (const union of errors) {
    if (union.keyword !== 'anyOf' && union.keyword !== 'oneOf') continue;
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, { missing: string[]; unknown: string[] }>();
    const inside = errors.filter((error) => error.schemaPath.startsWith(prefix));
    // Only missing fields, and fields no form knows (`{"foo": 1}`: foo is unknown to every form).
    const shapeOnly = inside.every((error) => (error.keyword === 'required' || error.keyword === 'additionalProperties') && error.instancePath === union.instancePath);
    if (inside.length === 0 || !shapeOnly) continue;
    for (const error of inside) {
      const branch = error.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      const entry = branches.get(branch) ?? { missing: [], unknown: [] };
      if (error.keyword === 'required') entry.missing.push(String((error.params as { missingProperty: string }).missingProperty));
      else entry.unknown.push(String((error.params as { additionalProperty: string }).additionalProperty));
      branches.set(branch, entry);
    }
    const entries = [...branches.values()];
    const unknownToAll = entries[0]?.unknown.slice().sort().join('\u0000') ?? '';
    if (branches.size < 2 || entries.some((entry) => entry.missing.length === 0 || entry.unknown.slice().sort().join('\u0000') !== unknownToAll)) continue;
    for (const error of [union, ...inside]) dropped.add(error);
    const forms = entries.map((entry) => `{ ${entry.missing.join(', ')} }`);
    const at = jsonPointerToPath(union.instancePath);
    details.push({ field: at || rootName, message: `must have the fields of one of its forms: ${forms.join(', or ')}` });
    // At most validationDetailsMax in all, as elsewhere: a body of 60,000 unknown fields was
    // answered 60,001 details, 4.8 MB (until 2026-12-08; found by an audit).
    for (const field of (entries[0]?.unknown ?? []).slice(0, Math.max(0, validationDetailsMax - details.length))) {
      details.push({ field: joinPath(at, field), message: rootName === 'body' ? 'is not a known field' : 'is not a known query parameter' });
    }
  }
  return { errors: dropped.size === 0 ? errors : errors.filter((error) => !dropped.has(error)), details };
}

/**
 * A union of object shapes (anyOf of objects: a vault reveal by card, by aliases or of documents)
 * fails once per branch, and the branches the body was not meant for call its good fields unknown.
 * Only the branches that came closest (fewest errors) are kept: a card reveal with one unknown field
 * is told about that field, not that `cardId` is not a known field of the aliases shape (until
 * 2026-12-05 every branch's errors were listed; found by an audit). Unions of constants and
 * nullable objects keep their own handling (detailsFromAjvErrors), so a branch that failed on a
 * constant or on "must be null" leaves the union as it is.
 */
function closestUnionBranches(errors: readonly ErrorObject[]): readonly ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  for (const union of errors) {
    if (union.keyword !== 'anyOf' && union.keyword !== 'oneOf') continue;
    const prefix = `${union.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const error of errors) {
      if (!error.schemaPath.startsWith(prefix)) continue;
      const branch = error.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      const branchErrors = branches.get(branch);
      if (branchErrors) branchErrors.push(error);
      else branches.set(branch, [error]);
    }
    if (branches.size < 2) continue;
    const special = (error: ErrorObject) => error.keyword === 'const' || error.keyword === 'enum' || (error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null');
    if ([...branches.values()].some((branchErrors) => branchErrors.every(special))) continue;
    // A branch whose fields the body has (none missing, none unknown) is the form it was meant as,
    // however many errors its values have: `{ "documents": ["passport"] }` is told about
    // documents[0], not that `aliases` is required (until 2026-12-06 the other shapes, with fewer
    // errors, won; found by an audit).
    // Failing that, the forms missing or refusing the fewest of its fields (`{ "fields": ["pin"] }`
    // is a card reveal without its cardId, not an aliases reveal).
    const wrongShape = (error: ErrorObject) => error.instancePath === union.instancePath && (error.keyword === 'required' || error.keyword === 'additionalProperties');
    const shapeErrors = (branchErrors: ErrorObject[]) => branchErrors.filter(wrongShape).length;
    const fewestShapeErrors = Math.min(...[...branches.values()].map(shapeErrors));
    const candidates = [...branches.values()].filter((branchErrors) => shapeErrors(branchErrors) === fewestShapeErrors);
    const fewest = Math.min(...candidates.map((branchErrors) => branchErrors.length));
    for (const branchErrors of branches.values()) {
      if (!candidates.includes(branchErrors) || branchErrors.length > fewest) for (const error of branchErrors) dropped.add(error);
    }
  }
  return dropped.size === 0 ? errors : errors.filter((error) => !dropped.has(error));
}

function mergeUnionDetails(details: ErrorDetail[]): ErrorDetail[] {
  const byField = new Map<string, string[]>();
  for (const detail of details) {
    const messages = byField.get(detail.field) ?? [];
    messages.push(detail.message);
    byField.set(detail.field, messages);
  }
  return [...byField.entries()].map(([field, messages]) => ({
    field,
    message: messages.length === 1 ? (messages[0] ?? '') : messages.join('; or '),
  }));
}

/**
 * A JSON request body: `undefined` for an empty one, else the parsed value, checked by
 * checkJsonValue and checkJsonText. The body must be UTF-8: a `charset` other than UTF-8 is
 * 415 UNSUPPORTED_MEDIA_TYPE and bytes that are not UTF-8 are 400 INVALID_JSON (decoding them
 * would replace them with U+FFFD and store a text the client never sent).
 */
export function parseJsonBody(contentType: string | undefined, body: Buffer): unknown {
  const charsets = [...(contentType ?? '').matchAll(/;\s*charset\s*=\s*"?([^";\s]*)/gi)].map((match) => (match[1] ?? '').toLowerCase());
  // Named twice, one reader could take the first and another the last (until 2026-12-08 the first
  // was read: `charset=utf-8; charset=latin1` passed; found by an audit).
  if (charsets.length > 1) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The Content-Type names its charset more than once; name it once (utf-8).', {
      details: [{ field: 'Content-Type', message: 'names charset more than once' }],
    });
  }
  const charset = charsets[0];
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `JSON bodies are UTF-8 (RFC 8259); charset=${charset} is not accepted.`, {
      details: [{ field: 'Content-Type', message: `charset=${charset} is not accepted: JSON bodies are UTF-8` }],
    });
  }
  if (!isUtf8(body)) throw new AppError('INVALID_JSON', 'The body is not valid UTF-8 (JSON bodies are UTF-8, RFC 8259).');
  const text = body.toString('utf8');
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AppError('INVALID_JSON', `The body is not valid JSON: ${(error as Error).message}`);
  }
  checkJsonValue(value);
  checkJsonText(text);
  return value;
}

/**
 * Path and query parameters may not hold the NUL character either (a database text cannot), so
 * `%00` anywhere in them is 400 VALIDATION_ERROR naming the parameter, before any lookup.
 */
export function refuseNulInParameters(...sources: unknown[]): void {
  for (const source of sources) {
    if (source === null || typeof source !== 'object') continue;
    for (const [name, value] of Object.entries(source as Record<string, unknown>)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.some((item) => typeof item === 'string' && item.includes('\u0000'))) {
        throw validationError(name, 'may not contain the NUL character (%00)');
      }
    }
  }
}

/**
 * A query string whose percent escapes do not decode (`%zz`, or bytes that are not UTF-8 such as
 * `%C0%AF` or `%ED%A0%80`) is 400 VALIDATION_ERROR naming the parameter, as such a path is 400.
 * The query parser keeps such a value as written, so `?email=%zz` was looked up as the text
 * "%zz" and an enum was told "must be one of" (until 2026-12-08; found by an audit).
 */
export function refuseUndecodableQuery(url: string): void {
  const start = url.indexOf('?');
  if (start === -1) return;
  const decode = (text: string) => decodeURIComponent(text.replaceAll('+', ' '));
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair.includes('%')) continue;
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    let name: string;
    try {
      name = decode(rawName);
    } catch {
      throw validationError('querystring', `holds a parameter name that is not valid percent-encoding (${rawName.slice(0, 40)}): escapes are %XX of UTF-8 text`);
    }
    try {
      if (equals !== -1) decode(pair.slice(equals + 1));
    } catch {
      throw validationError(name, 'is not valid percent-encoding: escapes are %XX of UTF-8 text');
    }
  }
}

/** A value met in a body, with its parent and its key: a path is built only for a value refused (this runs on every JSON request). */
type JsonItem = { value: unknown; depth: number; parent: JsonItem | undefined; key: string | number | undefined };

/**
 * Checks a parsed JSON body for what JSON.parse lets through but we refuse: nesting deeper than
 * jsonDepthMax, NUL characters and lone UTF-16 surrogates in strings or keys. Iterative, so a
 * hostile body cannot exhaust the stack. A refused string is named by its path in `details`
 * (`merchant.city`, `items[2]`), a refused field name by the path of the object that holds it
 * (`body` at the top), in the form checkJsonText uses.
 */
export function checkJsonValue(root: unknown): void {
  const stack: JsonItem[] = [{ value: root, depth: 0, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item) break;
    const { value, depth } = item;
    if (typeof value === 'string') {
      checkString(value, item, 'value');
    } else if (value !== null && typeof value === 'object') {
      if (depth >= jsonDepthMax) {
        throw new AppError('INVALID_JSON', `The body is nested more than ${jsonDepthMax} levels deep.`);
      }
      if (Array.isArray(value)) {
        value.forEach((element, index) => stack.push({ value: element, depth: depth + 1, parent: item, key: index }));
      } else {
        for (const [key, element] of Object.entries(value as Record<string, unknown>)) {
          checkString(key, item, 'field name');
          stack.push({ value: element, depth: depth + 1, parent: item, key });
        }
      }
    }
  }
}

/** The path of a value in a body, in the form checkJsonText uses (`merchant.city`, `items[2]`; `body` for the body itself). */
function pathOf(item: JsonItem): string {
  const keys: (string | number)[] = [];
  for (let at: JsonItem | undefined = item; at?.key !== undefined; at = at.parent) keys.unshift(at.key);
  if (keys.length === 0) return 'body';
  return keys.map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? key : `.${key}`)).join('');
}

function checkString(value: string, at: JsonItem, what: 'value' | 'field name'): void {
  const problem = value.includes('\u0000') ? 'the NUL character (\\u0000)' : value.isWellFormed() ? undefined : 'lone UTF-16 surrogates';
  if (problem === undefined) return;
  const detail = what === 'value' ? `may not contain ${problem}` : `holds a field name with ${problem}, which no field name may contain`;
  throw new AppError('INVALID_JSON', `Strings may not contain ${problem}.`, { details: [{ field: pathOf(at), message: detail }] });
}

/**
 * Checks the field names and numbers of a JSON text (already known to parse), in one pass over
 * the text, no recursion; 400 VALIDATION_ERROR naming the field by its path:
 * - a field named twice in one object: JSON.parse keeps the last value silently, while a proxy, a
 *   signature check or an audit that reads the first would see another request
 *   (`{"amount":"1.00","amount":"7.00"}`);
 * - the prototype keys `__proto__`, and `constructor` holding `prototype`: no route takes them,
 *   and further on they could reach an object's prototype; they are unknown fields;
 * - a number JSON.parse cannot hold exactly (inexactNumber): it would round it silently, so
 *   `4.999999999999999999999` became an amount of 5 and `1e-400` one of 0 (until 2026-12-08;
 *   found by an audit).
 */
export function checkJsonText(text: string): void {
  // The path of the value being read: an object frame keeps the keys seen and the current one; an array, its index.
  type Frame = { keys: Set<string>; key: string | undefined; expectsKey: boolean } | { index: number };
  const stack: Frame[] = [];
  const path = () =>
    stack
      .map((frame, depth) => ('index' in frame ? `[${frame.index}]` : depth === 0 ? (frame.key ?? '') : `.${frame.key ?? ''}`))
      .join('');
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at);
    if (char === 0x22 /* " */) {
      const start = at;
      let escaped = false;
      for (at++; at < text.length; at++) {
        const inner = text.charCodeAt(at);
        if (inner === 0x5c /* \ */) {
          escaped = true;
          at++;
        } else if (inner === 0x22) break;
      }
      const top = stack[stack.length - 1];
      if (top && 'keys' in top && top.expectsKey) {
        const raw = text.slice(start + 1, at);
        const key = escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
        top.key = key;
        top.expectsKey = false;
        if (top.keys.has(key)) throw validationError(path(), 'appears more than once in its object; send each field once');
        top.keys.add(key);
        if (key === '__proto__') throw unknownField(path());
        const parent = stack[stack.length - 2];
        if (key === 'prototype' && parent && 'keys' in parent && parent.key === 'constructor') throw unknownField(path().slice(0, -'.prototype'.length));
      }
    } else if (char === 0x7b /* { */) {
      stack.push({ keys: new Set(), key: undefined, expectsKey: true });
    } else if (char === 0x5b /* [ */) {
      stack.push({ index: 0 });
    } else if (char === 0x7d /* } */ || char === 0x5d /* ] */) {
      stack.pop();
    } else if (char === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top && 'keys' in top) top.expectsKey = true;
      else if (top) top.index++;
    } else if (char === 0x2d /* - */ || (char >= 0x30 && char <= 0x39) /* 0-9 */) {
      const start = at;
      while (at + 1 < text.length && isNumberChar(text.charCodeAt(at + 1))) at++;
      const literal = text.slice(start, at + 1);
      const read = inexactNumber(literal);
      if (read !== undefined) {
        throw validationError(path() || 'body', `is a number that cannot be held exactly (${literal} would be read as ${read}); send at most 15 significant digits`);
      }
    }
  }
}

/** Digits, the sign, the point and the exponent's letter: the characters a JSON number is written with. */
function isNumberChar(char: number): boolean {
  return (char >= 0x30 && char <= 0x39) || char === 0x2e /* . */ || char === 0x65 /* e */ || char === 0x45 /* E */ || char === 0x2b /* + */ || char === 0x2d; /* - */
}

/**
 * What JSON.parse makes of a number literal when that is not the number written (its shortest
 * form, `5` for `4.999999999999999999999`, `0` for `1e-400`, `Infinity` for `1e400`), else
 * undefined. At most 15 significant digits always come back as written (a double's 15 decimal
 * digits of precision); longer literals and exponents are compared digit by digit.
 */
export function inexactNumber(literal: string): string | undefined {
  if (literal.length <= 15 && !/[eE]/.test(literal)) return undefined;
  const read = String(Number(literal));
  return decimalDigits(literal) === decimalDigits(read) ? undefined : read;
}

/** A decimal literal as sign, significant digits and exponent (`-12e-1` for -1.20), one form per value; `0` for zero, whatever its sign; undefined for Infinity. */
function decimalDigits(literal: string): string | undefined {
  const match = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(literal);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  return `${sign}${trimmed}e${Number(exponent) - fraction.length + (digits.length - trimmed.length)}`;
}

function unknownField(field: string): AppError {
  return new AppError('VALIDATION_ERROR', `${field} is not a known field`, { details: [{ field, message: 'is not a known field' }] });
}

/** Whether a request's body was sent as JSON (application/json, or a +json type). */
export function isJsonRequest(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/([a-z0-9.+-]*\+)?json\b/i.test(contentType);
}

/**
 * For a route that takes no body: no body, null and {} are fine; fields are refused as unknown
 * fields are on every other route (400 VALIDATION_ERROR naming each), and any other JSON value
 * (an array, a string) names the body.
 */
export function refuseBodyFields(body: unknown): void {
  if (body === null || body === undefined) return;
  if (typeof body !== 'object' || Array.isArray(body)) throw validationError('body', 'must be empty: this route takes no body');
  const fields = Object.keys(body);
  if (fields.length === 0) return;
  const details = fields.slice(0, validationDetailsMax).map((field) => ({ field, message: 'is not a known field' }));
  throw new AppError('VALIDATION_ERROR', `Invalid request body: ${details.map((detail) => `${detail.field} ${detail.message}`).join('; ')}`, { details });
}
