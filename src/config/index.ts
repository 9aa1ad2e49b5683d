export * from './duration.ts';
export * from './error.ts';
export * from './load.ts';
export * from './resolve.ts';
export * from './rules.ts';
export * from './schema.ts';
export * from './shorthand.ts';
export * from './types.ts';
