export * from './duration.ts';
export * from './error.ts';
export * from './load.ts';
export * from './schema.ts';
export * from './shorthand.ts';
