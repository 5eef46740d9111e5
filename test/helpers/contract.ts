/**
 * Validates real responses (and requests) against the project's OpenAPI document, src/contract/openapi.yaml.
 * Every test that hits the emulator can call `validateResponse(operation, status, body, headers?)`.
 * Schemas are JSON Schema 2020-12 (OpenAPI 3.1), compiled with ajv once per process.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js';
import addFormatsImport from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on `.default`.
const addFormats = addFormatsImport as unknown as typeof addFormatsImport.default;

export const OPENAPI_PATH = fileURLToPath(new URL('../../src/contract/openapi.yaml', import.meta.url));

type Json = Record<string, unknown>;

interface OperationEntry {
  path: string;
  method: string;
  op: Json;
}

const ROOT_ID = 'https://filings-export.local/openapi.json';

function loadDocument(): Json {
  return parseYaml(readFileSync(OPENAPI_PATH, 'utf8')) as Json;
}

/** Rewrites `#/components/schemas/X` refs to `#/$defs/X` so the schemas form one 2020-12 document. */
function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value as Json)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
      out[k] = `${ROOT_ID}#/$defs/${v.slice('#/components/schemas/'.length)}`;
    } else {
      out[k] = rewriteRefs(v);
    }
  }
  return out;
}

export interface ContractValidator {
  /** Every operation id (x-operation) in the document. */
  operations(): string[];
  /** Status codes documented for an operation. */
  statuses(operation: string): string[];
  /** Errors of a response body (and of documented headers when given); empty when valid. */
  validateResponse(
    operation: string,
    status: number,
    body: unknown,
    headers?: Record<string, string | string[] | undefined>,
  ): string[];
  /** Errors of a request body (POST) or query object (GET); empty when valid. */
  validateRequest(operation: string, body: unknown): string[];
}

function formatErrors(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message ?? 'invalid'} ${JSON.stringify(e.params)}`,
  );
}

function createContractValidator(): ContractValidator {
  const doc = loadDocument();
  const components = (doc.components ?? {}) as Json;
  const schemas = rewriteRefs(components.schemas ?? {}) as Json;
  const responsesById = (components.responses ?? {}) as Json;
  const headersById = (components.headers ?? {}) as Json;

  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addSchema({ $id: ROOT_ID, $defs: schemas });

  const ops = new Map<string, OperationEntry>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const o = op as Json;
      if (typeof o['x-operation'] === 'string') ops.set(o['x-operation'], { path, method, op: o });
    }
  }

  const compiled = new Map<string, ValidateFunction>();
  function compile(key: string, schema: unknown): ValidateFunction {
    let fn = compiled.get(key);
    if (!fn) {
      fn = ajv.compile(rewriteRefs(schema) as Json);
      compiled.set(key, fn);
    }
    return fn;
  }

  function entry(operation: string): OperationEntry {
    const e = ops.get(operation);
    if (!e) throw new Error(`contract: unknown operation ${operation}`);
    return e;
  }

  function deref(obj: Json, table: Json, prefix: string): Json {
    const ref = obj.$ref;
    if (typeof ref === 'string') {
      if (!ref.startsWith(prefix)) throw new Error(`contract: unsupported $ref ${ref}`);
      return table[ref.slice(prefix.length)] as Json;
    }
    return obj;
  }

  function response(operation: string, status: number): Json | undefined {
    const responses = (entry(operation).op.responses ?? {}) as Json;
    const r = (responses[String(status)] ?? responses.default) as Json | undefined;
    return r ? deref(r, responsesById, '#/components/responses/') : undefined;
  }

  return {
    operations: () => [...ops.keys()],
    statuses: (operation) => Object.keys((entry(operation).op.responses ?? {}) as Json),

    validateResponse(operation, status, body, headers) {
      const r = response(operation, status);
      if (!r) return [`status ${status} is not documented for ${operation}`];
      const errors: string[] = [];
      const content = r.content as Json | undefined;
      const media = content?.['application/json'] as Json | undefined;
      if (media?.schema !== undefined) {
        const fn = compile(`res:${operation}:${status}`, media.schema);
        if (!fn(body)) errors.push(...formatErrors(fn.errors));
      } else if (body !== undefined && body !== null && body !== '') {
        // A documented response without JSON content (e.g. 302) is still fine with an empty body.
      }
      if (headers) {
        const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
        for (const [name, h] of Object.entries((r.headers ?? {}) as Json)) {
          const header = deref(h as Json, headersById, '#/components/headers/');
          const raw = lower[name.toLowerCase()];
          const value = Array.isArray(raw) ? raw[0] : raw;
          if (value === undefined) {
            if (header.required === true) errors.push(`header ${name} is required`);
            continue;
          }
          const schema = header.schema as Json;
          if (schema.type === 'integer' && !/^\d+$/.test(value)) {
            errors.push(`header ${name} must be an integer, got ${JSON.stringify(value)}`);
          }
        }
      }
      return errors;
    },

    validateRequest(operation, body) {
      const e = entry(operation);
      const rb = e.op.requestBody as Json | undefined;
      if (rb) {
        const media = (rb.content as Json)['application/json'] as Json;
        const fn = compile(`req:${operation}`, media.schema);
        return fn(body) ? [] : formatErrors(fn.errors);
      }
      // GET: build an object schema from the query parameters.
      const params = ((e.op.parameters ?? []) as Json[]).filter((p) => p.in === 'query');
      const schema = {
        type: 'object',
        properties: Object.fromEntries(params.map((p) => [p.name as string, p.schema])),
        required: params.filter((p) => p.required === true).map((p) => p.name as string),
        additionalProperties: false,
      };
      const fn = compile(`req:${operation}`, schema);
      return fn(body) ? [] : formatErrors(fn.errors);
    },
  };
}

let shared: ContractValidator | undefined;

/** The process-wide validator (compiled lazily, schemas cached). */
export function contract(): ContractValidator {
  shared ??= createContractValidator();
  return shared;
}

/** Errors of a response against the contract; empty when valid. */
export function validateResponse(
  operation: string,
  status: number,
  body: unknown,
  headers?: Record<string, string | string[] | undefined>,
): string[] {
  return contract().validateResponse(operation, status, body, headers);
}

/** Errors of a request against the contract; empty when valid. */
export function validateRequest(operation: string, body: unknown): string[] {
  return contract().validateRequest(operation, body);
}

/** Throws with every error listed when the response breaks the contract. */
export function assertValidResponse(
  operation: string,
  status: number,
  body: unknown,
  headers?: Record<string, string | string[] | undefined>,
): void {
  const errors = validateResponse(operation, status, body, headers);
  if (errors.length > 0) {
    throw new Error(
      `${operation} ${status} response breaks src/contract/openapi.yaml:\n  ${errors.slice(0, 20).join('\n  ')}`,
    );
  }
}
