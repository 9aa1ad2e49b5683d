import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import { describe, expect, it } from 'vitest';
import { DefaultJsonSchemaValidator } from '../../scripts/sdkShims.ts';

// The bundle the processes of this run start from (test/globalSetup.ts), built by scripts/build.ts as dist/ is.
const bundleDir = path.dirname(process.env['SKILLPIN_TEST_CLI']!);
const bundled = () =>
  readdirSync(bundleDir)
    .filter((name) => !name.endsWith('.map'))
    .map((name) => ({ name, text: readFileSync(path.join(bundleDir, name), 'utf8') }));

describe('the bundle leaves out what every start compiled for nothing', () => {
  it('is one CommonJS file that requires what it left out, with no import() (bin/compileCache.js runs it as a script)', () => {
    const files = bundled();
    expect(files.map(({ name }) => name)).toEqual(['cli.cjs']);
    const text = files[0]!.text;
    expect(text.includes('import(')).toBe(false);
    // Each library left out is required by name where it is used.
    for (const name of ['openpgp', 'isomorphic-git', '@redis/client', '@modelcontextprotocol/client'])
      expect(text.includes(`require("${name}")`), name).toBe(true);
  });

  it("holds no Ajv: the server's validator is ours, and the verify command's MCP client is required from node_modules", () => {
    // A sentence of ajv's own error messages, in every copy of ajv.
    expect(bundled().filter(({ text }) => text.includes('must have required property'))).toEqual([]);
  });

  it("holds zod's English messages and no other language's", () => {
    const files = bundled();
    expect(files.filter(({ text }) => text.includes('Ungültige Eingabe'))).toEqual([]);
    expect(files.some(({ text }) => text.includes('Invalid input: expected'))).toBe(true);
  });

  it("builds none of mime's own instances (scripts/mimeClass.ts): its class is there, for src/mcp/mime.ts's", () => {
    const files = bundled();
    // mime's entry freezes the instance it builds; the class defines the method.
    expect(files.filter(({ text }) => text.includes('._freeze()'))).toEqual([]);
    expect(
      files.filter(({ text }) => text.includes('define() not allowed for built-in Mime objects')).length,
    ).toBe(1);
  });
});

describe("the server's JSON Schema validator in the bundle (scripts/sdkShims.ts)", () => {
  // An elicitation form as skill_run asks for it, and one with a format and bounds.
  const schemas = [
    {
      type: 'object',
      properties: { confirm: { type: 'string', enum: ['run', 'refuse'] } },
      required: ['confirm'],
    },
    {
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        count: { type: 'integer', minimum: 1, maximum: 3 },
      },
      required: ['email'],
      additionalProperties: false,
    },
  ] as const;
  const inputs = [
    { confirm: 'run' },
    { confirm: 'maybe' },
    {},
    { email: 'a@example.com', count: 2 },
    { email: 'not an address' },
    { email: 'a@example.com', count: 9, extra: true },
    'text',
  ];

  it("answers every input exactly as the SDK's Ajv validator does", () => {
    const ours = new DefaultJsonSchemaValidator();
    const sdk = new AjvJsonSchemaValidator();
    const answers = schemas.flatMap((schema) =>
      inputs.map((input) => [ours.getValidator(schema)(input), sdk.getValidator(schema)(input)]),
    );
    for (const [mine, theirs] of answers) expect(mine).toEqual(theirs);
    // Both accept and refuse: the comparison is not between two validators that pass everything.
    expect(answers.map(([mine]) => (mine!.valid ? 'y' : 'n')).join('')).toBe('ynnnnnn' + 'nnnynnn');
    expect(answers[1]![0]!.errorMessage).toBe('data/confirm must be equal to one of the allowed values');
  });
});
