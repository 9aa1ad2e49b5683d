import { Mime } from 'mime';
import otherTypes from 'mime/types/other.js';
import standardTypes from 'mime/types/standard.js';

/**
 * Skills are mostly text and scripts: where the registry's type for an extension is another format's (`.ts` is
 * MPEG transport stream, `.rs` RLS services) or missing, the type a reader of a skill expects. YAML is
 * `application/yaml` (RFC 9512).
 */
const SKILL_TYPES: Record<string, string[]> = {
  'text/x-python': ['py', 'pyi'],
  'text/typescript': ['ts', 'mts', 'cts', 'tsx'],
  'application/x-sh': ['sh', 'bash', 'zsh'],
  'application/yaml': ['yaml', 'yml'],
  'text/x-ruby': ['rb'],
  'text/x-go': ['go'],
  'text/x-rust': ['rs'],
  'application/jsonl': ['jsonl', 'ndjson'],
};

// mime keeps its tables in Maps, so an extension such as `__proto__` or `constructor` finds nothing. Built at the
// first lookup: a server that only lists never needs it.
let types: Mime | undefined;

/** Media type from the file extension; `application/octet-stream` when unknown. */
export function mimeTypeFor(name: string): string {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return 'application/octet-stream';
  types ??= new Mime(standardTypes, otherTypes).define(SKILL_TYPES, true);
  return types.getType(name.slice(dot + 1)) ?? 'application/octet-stream';
}
