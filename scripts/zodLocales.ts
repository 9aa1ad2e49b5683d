// Bundled in place of zod's table of locales (`zod/v4/locales/index.js`, scripts/build.ts), which zod's public
// module re-exports as `z.locales`: 260 KB of error messages in 50 languages that every start compiled. skillpin's
// messages are English, and zod registers English itself (from `locales/en.js`, which stays). Nothing of ours
// calls `z.locales`.
export { default as en } from 'zod/v4/locales/en.js';
