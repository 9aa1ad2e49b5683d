// Bundled in place of `@modelcontextprotocol/server/_shims` (scripts/build.ts). The SDK's Node shim hands its
// server Ajv as the default JSON Schema validator, and every `Server` constructs one: ajv's 150 KB compiled and an
// Ajv instance built at each start, for a validator the server asks only to check an elicitation's answer
// (skill_run's confirmation form) or a `fromJsonSchema` tool. This shim loads the SDK's own Ajv validator (its
// CommonJS build, read from node_modules as prom-client is) when the first schema is asked for, and answers exactly
// as it does: test/scripts/build.test.ts holds the two side by side.
import { createRequire } from 'node:module';
import process from 'node:process';
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from '@modelcontextprotocol/server';

type AjvModule = typeof import('@modelcontextprotocol/server/validators/ajv');

const requireHere = createRequire(import.meta.url);
let ajv: jsonSchemaValidator | undefined;

export class DefaultJsonSchemaValidator implements jsonSchemaValidator {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    ajv ??= new (
      requireHere('@modelcontextprotocol/server/validators/ajv') as AjvModule
    ).AjvJsonSchemaValidator();
    return ajv.getValidator<T>(schema);
  }
}

export { process };
