// Bundled in place of `mime` (scripts/build.ts): the package's entry builds a default Mime over both of its tables
// at every start, which skillpin never uses (src/mcp/mime.ts builds its own at the first lookup). The class alone,
// as that entry exports it.
export { default as Mime } from '../node_modules/mime/dist/src/Mime.js';
