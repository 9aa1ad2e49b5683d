import { describe, expect, it } from 'vitest';
import { mimeTypeFor } from '../../src/mcp/mime.ts';

describe('mimeTypeFor', () => {
  it.each([
    ['SKILL.md', 'text/markdown'],
    ['GUIDE.MD', 'text/markdown'],
    ['fill.py', 'text/x-python'],
    ['run.ts', 'text/typescript'],
    ['run.sh', 'application/x-sh'],
    ['config.yaml', 'application/yaml'],
    ['schema.xsd', 'application/xml'],
    ['font.ttf', 'font/ttf'],
    ['font.woff2', 'font/woff2'],
    ['logo.png', 'image/png'],
    ['report.docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ['data.jsonl', 'application/jsonl'],
  ])('%s is %s', (name, type) => {
    expect(mimeTypeFor(name)).toBe(type);
  });

  it.each(['x.__proto__', 'x.constructor', 'x.toString', 'x.hasOwnProperty', 'Makefile', '.env', 'x.'])(
    '%s is application/octet-stream: nothing comes from a prototype or a name without an extension',
    (name) => {
      expect(mimeTypeFor(name)).toBe('application/octet-stream');
    },
  );
});
